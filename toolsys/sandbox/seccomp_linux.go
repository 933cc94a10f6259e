//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denySocketBypass installs the seccomp filter of socketFilter, for
// Landlock ABI abi, on the calling thread (no_new_privs is already set by
// Landlock). On an architecture without a table (other than amd64 and
// arm64) it installs nothing: what the filter closes stays open there.
func denySocketBypass(abi int) error {
	archs, ok := filterRules(runtime.GOARCH, abi)
	if !ok {
		return nil
	}
	raw, err := socketFilter(archs)
	if err != nil {
		return err
	}
	insns := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		insns[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp filter: %w", err)
	}
	runtime.KeepAlive(insns)
	return nil
}
