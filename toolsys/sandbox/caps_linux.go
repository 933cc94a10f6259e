//go:build linux

package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// keptCapability reports whether a command started by root keeps
// capability c: only those that let it work on files it does not own, so
// that a workspace owned by another user stays usable. The rest (raw
// sockets, network administration, mounts, modules, device nodes, reboot,
// changing user, opening files by handle with CAP_DAC_READ_SEARCH...) are
// beyond what Landlock restricts, and are dropped.
func keptCapability(c int) bool {
	switch c {
	case unix.CAP_CHOWN, unix.CAP_DAC_OVERRIDE, unix.CAP_FOWNER, unix.CAP_FSETID:
		return true
	}
	return false
}

// dropCapabilities removes every capability but the kept ones from the
// bounding set, and clears the inheritable and ambient sets, so that the
// program executed next, even as root, holds at most the kept ones. A
// process without CAP_SETPCAP cannot shrink its bounding set; it holds no
// capability to lose either, unless it is root, whose capabilities after
// an exec are then those it already has.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	for c := 0; ; c++ {
		if keptCapability(c) {
			continue
		}
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if errors.Is(err, unix.EPERM) {
			break // no CAP_SETPCAP
		}
		if err != nil {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
