package sandbox

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// Landlock leaves ways around its rules open, which a seccomp filter
// closes:
//
//   - Multipath TCP sockets reach the same peers as TCP but escape its port
//     rules: socket() with protocol IPPROTO_MPTCP fails with
//     EPROTONOSUPPORT (Go and other clients then fall back to plain TCP,
//     which Landlock checks);
//   - TCP Fast Open connects an unconnected socket without the connect
//     hook: a sendto, sendmsg or sendmmsg with MSG_FASTOPEN fails with
//     EOPNOTSUPP;
//   - io_uring creates sockets and opens files without the system calls the
//     filter sees: io_uring_setup() fails with ENOSYS, and so does the
//     32-bit socketcall() multiplexer, whose arguments it cannot read;
//   - below ABI 9, connecting to a UNIX socket by path is not checked (the
//     docker or systemd socket would let a command out): socket() with
//     domain AF_UNIX fails with EACCES (socketpair still works);
//   - the kernel keyrings of the user (add_key, request_key, keyctl) and
//     opening a file by handle (open_by_handle_at) fail with ENOSYS.

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

	afUnix          = 1
	ipprotoMPTCP    = 262
	msgFastOpen     = 0x20000000
	errnoEACCES     = 13
	errnoENOSYS     = 38
	errnoEPROTONOSP = 93 // EPROTONOSUPPORT
	errnoEOPNOTSUPP = 95

	// Offsets in struct seccomp_data: nr, arch, then the arguments after
	// the instruction pointer; the low half of an argument comes first on
	// little-endian machines, the only ones with a table below.
	offNr    = 0
	offArch  = 4
	offArgs  = 16
	maxInsns = 4096 // BPF_MAXINSNS
)

// unixPathABI is the first Landlock ABI that restricts connecting to a
// UNIX socket by path.
const unixPathABI = 9

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

// archRules are the denied system calls of one architecture.
type archRules struct {
	arch  uint32
	rules []syscallRule
}

// syscalls are the numbers of the system calls the filter looks at, in one
// architecture's table; zero for one it does not have.
type syscalls struct {
	socket, sendto, sendmsg, sendmmsg, ioUringSetup, socketcall uint32
	addKey, requestKey, keyctl, openByHandleAt                  uint32
}

// rules are the filter's rules for the calls of t, under Landlock ABI abi.
func (t syscalls) rules(abi int) []syscallRule {
	rs := []syscallRule{
		{nr: t.socket, check: denyIfEqual, arg: 2, val: ipprotoMPTCP, errno: errnoEPROTONOSP},
		{nr: t.sendto, check: denyIfBitsSet, arg: 3, val: msgFastOpen, errno: errnoEOPNOTSUPP},
		{nr: t.sendmsg, check: denyIfBitsSet, arg: 2, val: msgFastOpen, errno: errnoEOPNOTSUPP},
		{nr: t.sendmmsg, check: denyIfBitsSet, arg: 3, val: msgFastOpen, errno: errnoEOPNOTSUPP},
	}
	if abi < unixPathABI {
		rs = append(rs, syscallRule{nr: t.socket, check: denyIfEqual, arg: 0, val: afUnix, errno: errnoEACCES})
	}
	for _, nr := range []uint32{t.ioUringSetup, t.socketcall, t.addKey, t.requestKey, t.keyctl, t.openByHandleAt} {
		if nr != 0 {
			rs = append(rs, syscallRule{nr: nr, check: denyAlways, errno: errnoENOSYS})
		}
	}
	return rs
}

// filterRules returns the rules for the architectures whose code a process
// of GOARCH goarch may run, under Landlock ABI abi, and false for a GOARCH
// without a table.
func filterRules(goarch string, abi int) ([]archRules, bool) {
	switch goarch {
	case "amd64":
		x86 := syscalls{socket: 41, sendto: 44, sendmsg: 46, sendmmsg: 307, ioUringSetup: 425,
			addKey: 248, requestKey: 249, keyctl: 250, openByHandleAt: 304}
		const x = x32SyscallBit
		x32 := syscalls{socket: 41 | x, sendto: 44 | x, sendmsg: 518 | x, sendmmsg: 538 | x, ioUringSetup: 425 | x,
			addKey: 248 | x, requestKey: 249 | x, keyctl: 250 | x, openByHandleAt: 304 | x}
		i386 := syscalls{socket: 359, sendto: 369, sendmsg: 370, sendmmsg: 345, ioUringSetup: 425, socketcall: 102,
			addKey: 286, requestKey: 287, keyctl: 288, openByHandleAt: 342}
		return []archRules{
			{auditArchX8664, append(x86.rules(abi), x32.rules(abi)...)},
			{auditArchI386, i386.rules(abi)},
		}, true
	case "arm64":
		a64 := syscalls{socket: 198, sendto: 206, sendmsg: 211, sendmmsg: 269, ioUringSetup: 425,
			addKey: 217, requestKey: 218, keyctl: 219, openByHandleAt: 265}
		arm := syscalls{socket: 281, sendto: 290, sendmsg: 296, sendmmsg: 374, ioUringSetup: 425,
			addKey: 309, requestKey: 310, keyctl: 311, openByHandleAt: 371}
		return []archRules{
			{auditArchAarch64, a64.rules(abi)},
			{auditArchARM, arm.rules(abi)},
		}, true
	}
	return nil, false
}

// socketFilter assembles the seccomp program for archs: a call is denied
// with the errno of the first of its rules that matches, every other call
// of a listed architecture is allowed, and a call of an unlisted
// architecture fails with ENOSYS.
func socketFilter(archs []archRules) ([]bpf.RawInstruction, error) {
	ret := func(errno uint32) bpf.Instruction { return bpf.RetConstant{Val: seccompRetErrno | errno} }
	allow := bpf.RetConstant{Val: seccompRetAllow}
	prog := []bpf.Instruction{bpf.LoadAbsolute{Off: offArch, Size: 4}}
	for _, a := range archs {
		block := []bpf.Instruction{bpf.LoadAbsolute{Off: offNr, Size: 4}}
		var nrs []uint32 // in first-rule order
		byNr := map[uint32][]syscallRule{}
		for _, r := range a.rules {
			if byNr[r.nr] == nil {
				nrs = append(nrs, r.nr)
			}
			byNr[r.nr] = append(byNr[r.nr], r)
		}
		for _, nr := range nrs {
			// The checks load arguments over nr: once nr matches, the
			// call is decided in this group.
			var group []bpf.Instruction
			for _, r := range byNr[nr] {
				switch r.check {
				case denyAlways:
					group = append(group, ret(r.errno))
				case denyIfEqual, denyIfBitsSet:
					cond := bpf.JumpEqual
					if r.check == denyIfBitsSet {
						cond = bpf.JumpBitsSet
					}
					group = append(group,
						bpf.LoadAbsolute{Off: offArgs + 8*r.arg, Size: 4},
						bpf.JumpIf{Cond: cond, Val: r.val, SkipFalse: 1},
						ret(r.errno))
				default:
					return nil, fmt.Errorf("seccomp filter: unknown check %d", r.check)
				}
			}
			group = append(group, allow)
			if len(group) > 255 {
				return nil, fmt.Errorf("seccomp filter: %d instructions for call %d", len(group), nr)
			}
			block = append(block, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: uint8(len(group))})
			block = append(block, group...)
		}
		block = append(block, allow)
		if len(block) > 255 {
			return nil, fmt.Errorf("seccomp filter: %d instructions for arch %#x", len(block), a.arch)
		}
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.arch, SkipTrue: uint8(len(block))})
		prog = append(prog, block...)
	}
	prog = append(prog, ret(errnoENOSYS))
	if len(prog) > maxInsns {
		return nil, fmt.Errorf("seccomp filter: %d instructions", len(prog))
	}
	return bpf.Assemble(prog)
}
