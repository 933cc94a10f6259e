package sandbox

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// Landlock restricts TCP connect and bind, but not Multipath TCP sockets,
// which reach the same peers (a client falls back to plain TCP on the
// wire). Nor does it see io_uring, which can create sockets without the
// socket system call. A seccomp filter closes both: socket() with protocol
// IPPROTO_MPTCP fails with EPROTONOSUPPORT (Go and other clients then fall
// back to plain TCP, which Landlock checks), and io_uring_setup() and the
// 32-bit socketcall() multiplexer fail with ENOSYS.

// Constants of the filter (linux/seccomp.h, linux/audit.h, linux/in.h),
// spelled out so that the filter can be built and tested on any system.
const (
	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000

	auditArchX8664   = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAarch64 = 0xc00000b7
	auditArchARM     = 0x40000028

	x32SyscallBit = 0x40000000

	ipprotoMPTCP    = 262
	errnoENOSYS     = 38
	errnoEPROTONOSP = 93 // EPROTONOSUPPORT

	// Offsets in struct seccomp_data: nr, arch, then the arguments after
	// the instruction pointer; the low half of an argument comes first on
	// little-endian machines, the only ones with a table below.
	offNr    = 0
	offArch  = 4
	offArg2  = 16 + 2*8
	maxInsns = 255
)

// syscallRule denies one system call: always, or only when its third
// argument (socket's protocol) is IPPROTO_MPTCP.
type syscallRule struct {
	nr        uint32
	mptcpOnly bool
}

// archRules are the denied system calls of one architecture.
type archRules struct {
	arch  uint32
	rules []syscallRule
}

// filterRules returns the rules for the architectures whose code a process
// of GOARCH goarch may run, and false for a GOARCH without a table.
func filterRules(goarch string) ([]archRules, bool) {
	switch goarch {
	case "amd64":
		return []archRules{
			{auditArchX8664, []syscallRule{
				{41, true}, {41 | x32SyscallBit, true}, // socket
				{425, false}, {425 | x32SyscallBit, false}, // io_uring_setup
			}},
			{auditArchI386, []syscallRule{{359, true}, {102, false}, {425, false}}}, // socket, socketcall, io_uring_setup
		}, true
	case "arm64":
		return []archRules{
			{auditArchAarch64, []syscallRule{{198, true}, {425, false}}},
			{auditArchARM, []syscallRule{{281, true}, {425, false}}},
		}, true
	}
	return nil, false
}

// socketFilter assembles the seccomp program for archs: a denied call
// fails with an errno, every other call of a listed architecture is
// allowed, and a call of an unlisted architecture fails with ENOSYS.
func socketFilter(archs []archRules) ([]bpf.RawInstruction, error) {
	deny := func(errno uint32) bpf.Instruction { return bpf.RetConstant{Val: seccompRetErrno | errno} }
	allow := bpf.RetConstant{Val: seccompRetAllow}
	prog := []bpf.Instruction{bpf.LoadAbsolute{Off: offArch, Size: 4}}
	for _, a := range archs {
		block := []bpf.Instruction{bpf.LoadAbsolute{Off: offNr, Size: 4}}
		for _, r := range a.rules {
			if r.mptcpOnly {
				block = append(block,
					bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: r.nr, SkipTrue: 4},
					bpf.LoadAbsolute{Off: offArg2, Size: 4},
					bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: ipprotoMPTCP, SkipTrue: 1},
					deny(errnoEPROTONOSP),
					allow)
			} else {
				block = append(block,
					bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: r.nr, SkipTrue: 1},
					deny(errnoENOSYS))
			}
		}
		block = append(block, allow)
		if len(block) > maxInsns {
			return nil, fmt.Errorf("seccomp filter: %d instructions for arch %#x", len(block), a.arch)
		}
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.arch, SkipTrue: uint8(len(block))})
		prog = append(prog, block...)
	}
	prog = append(prog, deny(errnoENOSYS))
	return bpf.Assemble(prog)
}
