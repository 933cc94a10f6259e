package sandbox

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// Landlock restricts TCP connect and bind, but three ways around them stay
// open: Multipath TCP sockets, which reach the same peers (a client falls
// back to plain TCP on the wire); TCP Fast Open, a sendto or sendmsg with
// MSG_FASTOPEN that connects an unconnected socket without the connect
// hook; and io_uring, which creates sockets without the socket system
// call. A seccomp filter closes them: socket() with protocol IPPROTO_MPTCP
// fails with EPROTONOSUPPORT (Go and other clients then fall back to plain
// TCP, which Landlock checks), a send with MSG_FASTOPEN fails with
// EOPNOTSUPP, and io_uring_setup() and the 32-bit socketcall() multiplexer
// fail with ENOSYS.

// Constants of the filter (linux/seccomp.h, linux/audit.h, linux/in.h,
// linux/socket.h), spelled out so that the filter can be built and tested
// on any system.
const (
	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000

	auditArchX8664   = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAarch64 = 0xc00000b7
	auditArchARM     = 0x40000028

	x32SyscallBit = 0x40000000

	ipprotoMPTCP    = 262
	msgFastOpen     = 0x20000000
	errnoENOSYS     = 38
	errnoEPROTONOSP = 93 // EPROTONOSUPPORT
	errnoEOPNOTSUPP = 95

	// Offsets in struct seccomp_data: nr, arch, then the arguments after
	// the instruction pointer; the low half of an argument comes first on
	// little-endian machines, the only ones with a table below.
	offNr    = 0
	offArch  = 4
	offArgs  = 16
	maxInsns = 255
)

// ruleCheck says when a syscallRule denies its call.
type ruleCheck int

const (
	// denyAlways denies every call.
	denyAlways ruleCheck = iota
	// denyIfEqual denies a call whose argument equals the value.
	denyIfEqual
	// denyIfBitsSet denies a call whose argument has a bit of the value.
	denyIfBitsSet
)

// syscallRule denies one system call, always or depending on the low half
// of one of its arguments, with an errno.
type syscallRule struct {
	nr    uint32
	check ruleCheck
	arg   uint32 // argument index, for the conditional checks
	val   uint32
	errno uint32
}

// denyMPTCP denies the socket call nr when its protocol is IPPROTO_MPTCP.
func denyMPTCP(nr uint32) syscallRule {
	return syscallRule{nr: nr, check: denyIfEqual, arg: 2, val: ipprotoMPTCP, errno: errnoEPROTONOSP}
}

// denyFastOpen denies the send call nr when its flags, argument flagsArg,
// hold MSG_FASTOPEN.
func denyFastOpen(nr, flagsArg uint32) syscallRule {
	return syscallRule{nr: nr, check: denyIfBitsSet, arg: flagsArg, val: msgFastOpen, errno: errnoEOPNOTSUPP}
}

// denyCall denies the call nr outright.
func denyCall(nr uint32) syscallRule {
	return syscallRule{nr: nr, check: denyAlways, errno: errnoENOSYS}
}

// archRules are the denied system calls of one architecture.
type archRules struct {
	arch  uint32
	rules []syscallRule
}

// filterRules returns the rules for the architectures whose code a process
// of GOARCH goarch may run, and false for a GOARCH without a table. The
// numbers are those of socket, sendto, sendmsg, sendmmsg, io_uring_setup
// and socketcall in each architecture's table.
func filterRules(goarch string) ([]archRules, bool) {
	switch goarch {
	case "amd64":
		const x = x32SyscallBit
		return []archRules{
			{auditArchX8664, []syscallRule{
				denyMPTCP(41), denyFastOpen(44, 3), denyFastOpen(46, 2), denyFastOpen(307, 3), denyCall(425),
				denyMPTCP(41 | x), denyFastOpen(44|x, 3), denyFastOpen(518|x, 2), denyFastOpen(538|x, 3), denyCall(425 | x),
			}},
			{auditArchI386, []syscallRule{
				denyMPTCP(359), denyFastOpen(369, 3), denyFastOpen(370, 2), denyFastOpen(345, 3), denyCall(425), denyCall(102),
			}},
		}, true
	case "arm64":
		return []archRules{
			{auditArchAarch64, []syscallRule{denyMPTCP(198), denyFastOpen(206, 3), denyFastOpen(211, 2), denyFastOpen(269, 3), denyCall(425)}},
			{auditArchARM, []syscallRule{denyMPTCP(281), denyFastOpen(290, 3), denyFastOpen(296, 2), denyFastOpen(374, 3), denyCall(425)}},
		}, true
	}
	return nil, false
}

// socketFilter assembles the seccomp program for archs: a denied call
// fails with its errno, every other call of a listed architecture is
// allowed, and a call of an unlisted architecture fails with ENOSYS.
func socketFilter(archs []archRules) ([]bpf.RawInstruction, error) {
	ret := func(errno uint32) bpf.Instruction { return bpf.RetConstant{Val: seccompRetErrno | errno} }
	allow := bpf.RetConstant{Val: seccompRetAllow}
	prog := []bpf.Instruction{bpf.LoadAbsolute{Off: offArch, Size: 4}}
	for _, a := range archs {
		block := []bpf.Instruction{bpf.LoadAbsolute{Off: offNr, Size: 4}}
		for _, r := range a.rules {
			switch r.check {
			case denyAlways:
				block = append(block,
					bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: r.nr, SkipTrue: 1},
					ret(r.errno))
			case denyIfEqual, denyIfBitsSet:
				cond := bpf.JumpEqual
				if r.check == denyIfBitsSet {
					cond = bpf.JumpBitsSet
				}
				// The argument replaces nr in the register: the call is
				// decided here either way.
				block = append(block,
					bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: r.nr, SkipTrue: 4},
					bpf.LoadAbsolute{Off: offArgs + 8*r.arg, Size: 4},
					bpf.JumpIf{Cond: cond, Val: r.val, SkipFalse: 1},
					ret(r.errno),
					allow)
			default:
				return nil, fmt.Errorf("seccomp filter: unknown check %d", r.check)
			}
		}
		block = append(block, allow)
		if len(block) > maxInsns {
			return nil, fmt.Errorf("seccomp filter: %d instructions for arch %#x", len(block), a.arch)
		}
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.arch, SkipTrue: uint8(len(block))})
		prog = append(prog, block...)
	}
	prog = append(prog, ret(errnoENOSYS))
	return bpf.Assemble(prog)
}
