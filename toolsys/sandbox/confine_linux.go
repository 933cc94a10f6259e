//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// writeAccess is what a writable hierarchy allows: everything Landlock
// handles up to ABI 4, including moving and linking files inside it
// (refer), but not making device nodes.
const writeAccess landlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
	ll.AccessFSReadDir | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg |
	ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate

// confineAndExec confines the process to sp's rules and executes sp's
// program. It returns only on failure.
func confineAndExec(sp spec, status *os.File) error {
	// Capabilities and seccomp filters are per thread: the thread that sets
	// them must be the one that executes the program.
	runtime.LockOSThread()
	abi, err := confine(sp)
	if err != nil {
		return err
	}
	// Landlock checks opening a file, not using a descriptor opened
	// before: one this process inherited without close-on-exec (from a
	// careless parent of the program) must not reach the command. This
	// includes statusFD, which the exec then closes.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("close inherited descriptors: %w", err)
	}
	if _, err := fmt.Fprintf(status, "confined %d\n", abi); err != nil {
		return fmt.Errorf("report to the parent: %w", err)
	}
	err = syscall.Exec(sp.Path, sp.Args, sp.Env)
	return fmt.Errorf("execute %s: %w", sp.Path, err)
}

// confine applies sp's rules to the process: Landlock on files, TCP ports
// and IPC scopes, then the capability and socket restrictions. It returns
// the Landlock ABI the rules are enforced with.
func confine(sp spec) (int, error) {
	abi, err := hostABI()
	if err != nil {
		return 0, err
	}
	cfg := preset(abi)
	rules, err := fsRules(sp)
	if err != nil {
		return 0, err
	}
	for _, p := range sp.Ports {
		rules = append(rules, landlock.ConnectTCP(uint16(p)))
	}
	if abi >= 10 && len(sp.Ports) > 0 {
		// UDP is restricted from ABI 10 on: let names resolve when some
		// TCP port is reachable.
		rules = append(rules, landlock.BindUDP(0), landlock.ConnectSendUDP(53))
	}
	if err := cfg.Restrict(rules...); err != nil {
		return 0, fmt.Errorf("landlock: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return 0, err
	}
	if err := denySocketBypass(abi); err != nil {
		return 0, err
	}
	return abi, nil
}

// fsRules are the Landlock rules for sp's readable and writable paths: a
// directory's rule covers its hierarchy, a file's the file alone.
// Readable paths that do not exist are left out; writable ones must exist.
func fsRules(sp spec) ([]landlock.Rule, error) {
	var rules []landlock.Rule
	for _, p := range sp.Read {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("readable path: %w", err)
		case fi.IsDir():
			rules = append(rules, landlock.RODirs(p).IgnoreIfMissing())
		default:
			rules = append(rules, landlock.ROFiles(p).IgnoreIfMissing())
		}
	}
	for _, p := range sp.List {
		rules = append(rules, landlock.PathAccess(ll.AccessFSReadDir, p).IgnoreIfMissing())
	}
	for _, p := range sp.Write {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			return nil, fmt.Errorf("writable path: %w", err)
		case fi.IsDir():
			rules = append(rules, landlock.PathAccess(writeAccess, p))
		default:
			rules = append(rules, landlock.RWFiles(p))
		}
	}
	return rules, nil
}

// preset is the go-landlock configuration that handles everything ABI abi
// can restrict.
func preset(abi int) landlock.Config {
	switch {
	case abi <= 4:
		return landlock.V4
	case abi == 5:
		return landlock.V5
	case abi == 6:
		return landlock.V6
	case abi == 7:
		return landlock.V7
	case abi == 8:
		return landlock.V8
	case abi == 9:
		return landlock.V9
	case abi == 10:
		return landlock.V10
	}
	return landlock.V11
}

// maxABI is the newest Landlock ABI go-landlock knows; a newer kernel is
// used at that level.
const maxABI = 11

// hostABI returns the Landlock ABI the kernel offers, as go-landlock
// counts it (an ABI 6+ kernel without the signal-scoping fix counts as 5),
// or an error saying why it cannot be used.
func hostABI() (int, error) {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, unix.ENOSYS):
		return 0, errors.New("the kernel has no Landlock, or a seccomp filter forbids it (landlock_create_ruleset: ENOSYS)")
	case errors.Is(err, unix.EOPNOTSUPP):
		return 0, errors.New("Landlock is disabled in this kernel (add landlock to the lsm= boot parameter)")
	case err != nil:
		return 0, fmt.Errorf("Landlock is unavailable (landlock_create_ruleset: %w)", err)
	}
	if v >= 6 {
		if errata, err := ll.LandlockGetErrata(); err != nil || errata&0x2 == 0 {
			v = 5
		}
	}
	if v < MinABI {
		return 0, fmt.Errorf("the kernel offers Landlock ABI %d; denying TCP connections needs ABI %d (Linux 6.7 or later)", v, MinABI)
	}
	return min(v, maxABI), nil
}
