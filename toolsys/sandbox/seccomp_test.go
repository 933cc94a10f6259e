package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// seccompData lays out the fields of struct seccomp_data the filter reads.
// The kernel loads them in the machine's byte order, the BPF VM of x/net
// in big-endian order: each field is written for the VM, at its offset.
func seccompData(arch, nr uint32, args ...uint32) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[offArgs+8*i:], a)
	}
	return b
}

func TestSocketFilter(t *testing.T) {
	const (
		allow     = seccompRetAllow
		noProto   = seccompRetErrno | errnoEPROTONOSP
		noSupport = seccompRetErrno | errnoEOPNOTSUPP
		noSys     = seccompRetErrno | errnoENOSYS
		noAccess  = seccompRetErrno | errnoEACCES
		tcp       = 6
		x         = x32SyscallBit
		fastOpen  = msgFastOpen | 0x40 // with MSG_DONTWAIT
		unknownA  = 0x12345678
	)
	tests := []struct {
		goarch string
		abi    int
		name   string
		arch   uint32
		nr     uint32
		args   []uint32
		want   uint32
	}{
		{"amd64", 7, "MPTCP socket", auditArchX8664, 41, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"amd64", 7, "TCP socket", auditArchX8664, 41, []uint32{2, 1, tcp}, allow},
		{"amd64", 7, "default protocol", auditArchX8664, 41, []uint32{2, 1, 0}, allow},
		{"amd64", 7, "x32 MPTCP socket", auditArchX8664, 41 | x, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"amd64", 7, "sendto with MSG_FASTOPEN", auditArchX8664, 44, []uint32{3, 0, 1, fastOpen}, noSupport},
		{"amd64", 7, "sendto", auditArchX8664, 44, []uint32{3, 0, 1, 0x40}, allow},
		{"amd64", 7, "sendmsg with MSG_FASTOPEN", auditArchX8664, 46, []uint32{3, 0, msgFastOpen}, noSupport},
		{"amd64", 7, "sendmsg", auditArchX8664, 46, []uint32{3, 0, 0, msgFastOpen}, allow},
		{"amd64", 7, "sendmmsg with MSG_FASTOPEN", auditArchX8664, 307, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"amd64", 7, "x32 sendto with MSG_FASTOPEN", auditArchX8664, 44 | x, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"amd64", 7, "x32 sendmsg with MSG_FASTOPEN", auditArchX8664, 518 | x, []uint32{3, 0, msgFastOpen}, noSupport},
		{"amd64", 7, "x32 sendmmsg with MSG_FASTOPEN", auditArchX8664, 538 | x, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"amd64", 7, "io_uring_setup", auditArchX8664, 425, nil, noSys},
		{"amd64", 7, "x32 io_uring_setup", auditArchX8664, 425 | x, nil, noSys},
		{"amd64", 7, "read", auditArchX8664, 0, []uint32{0, 0, ipprotoMPTCP, msgFastOpen}, allow},
		{"amd64", 7, "connect", auditArchX8664, 42, []uint32{3, 0, ipprotoMPTCP}, allow},
		{"amd64", 7, "i386 MPTCP socket", auditArchI386, 359, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"amd64", 7, "i386 TCP socket", auditArchI386, 359, []uint32{2, 1, tcp}, allow},
		{"amd64", 7, "i386 sendto with MSG_FASTOPEN", auditArchI386, 369, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"amd64", 7, "i386 sendmsg with MSG_FASTOPEN", auditArchI386, 370, []uint32{3, 0, msgFastOpen}, noSupport},
		{"amd64", 7, "i386 sendmmsg with MSG_FASTOPEN", auditArchI386, 345, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"amd64", 7, "i386 socketcall", auditArchI386, 102, nil, noSys},
		{"amd64", 7, "i386 read", auditArchI386, 3, nil, allow},
		{"amd64", 7, "unknown architecture", unknownA, 41, []uint32{2, 1, tcp}, noSys},
		{"arm64", 7, "MPTCP socket", auditArchAarch64, 198, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"arm64", 7, "TCP socket", auditArchAarch64, 198, []uint32{2, 1, tcp}, allow},
		{"arm64", 7, "sendto with MSG_FASTOPEN", auditArchAarch64, 206, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"arm64", 7, "sendmsg with MSG_FASTOPEN", auditArchAarch64, 211, []uint32{3, 0, msgFastOpen}, noSupport},
		{"arm64", 7, "sendmmsg with MSG_FASTOPEN", auditArchAarch64, 269, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"arm64", 7, "sendto", auditArchAarch64, 206, []uint32{3, 0, 1, 0}, allow},
		{"arm64", 7, "io_uring_setup", auditArchAarch64, 425, nil, noSys},
		{"arm64", 7, "arm MPTCP socket", auditArchARM, 281, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"arm64", 7, "arm TCP socket", auditArchARM, 281, []uint32{2, 1, tcp}, allow},
		{"arm64", 7, "arm sendto with MSG_FASTOPEN", auditArchARM, 290, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"arm64", 7, "arm sendmsg with MSG_FASTOPEN", auditArchARM, 296, []uint32{3, 0, msgFastOpen}, noSupport},
		{"arm64", 7, "arm sendmmsg with MSG_FASTOPEN", auditArchARM, 374, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"arm64", 7, "x86-64 on arm64", auditArchX8664, 41, []uint32{2, 1, ipprotoMPTCP}, noSys},
		{"amd64", 7, "UNIX socket", auditArchX8664, 41, []uint32{afUnix, 1, 0}, noAccess},
		{"amd64", 7, "x32 UNIX socket", auditArchX8664, 41 | x, []uint32{afUnix, 1, 0}, noAccess},
		{"amd64", 7, "i386 UNIX socket", auditArchI386, 359, []uint32{afUnix, 1, 0}, noAccess},
		{"amd64", 7, "socketpair", auditArchX8664, 53, []uint32{afUnix, 1, 0}, allow},
		{"amd64", 9, "UNIX socket from ABI 9", auditArchX8664, 41, []uint32{afUnix, 1, 0}, allow},
		{"amd64", 9, "MPTCP socket from ABI 9", auditArchX8664, 41, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"amd64", 7, "keyctl", auditArchX8664, 250, nil, noSys},
		{"amd64", 7, "add_key", auditArchX8664, 248, nil, noSys},
		{"amd64", 7, "request_key", auditArchX8664, 249, nil, noSys},
		{"amd64", 7, "open_by_handle_at", auditArchX8664, 304, nil, noSys},
		{"amd64", 7, "i386 keyctl", auditArchI386, 288, nil, noSys},
		{"amd64", 7, "i386 open_by_handle_at", auditArchI386, 342, nil, noSys},
		{"arm64", 7, "UNIX socket", auditArchAarch64, 198, []uint32{afUnix, 1, 0}, noAccess},
		{"arm64", 9, "UNIX socket from ABI 9", auditArchAarch64, 198, []uint32{afUnix, 1, 0}, allow},
		{"arm64", 7, "keyctl", auditArchAarch64, 219, nil, noSys},
		{"arm64", 7, "open_by_handle_at", auditArchAarch64, 265, nil, noSys},
		{"arm64", 7, "arm UNIX socket", auditArchARM, 281, []uint32{afUnix, 1, 0}, noAccess},
		{"arm64", 7, "arm keyctl", auditArchARM, 311, nil, noSys},
	}
	vm := func(t *testing.T, goarch string, abi int) *bpf.VM {
		t.Helper()
		archs, ok := filterRules(goarch, abi)
		if !ok {
			t.Fatalf("no filter for %s", goarch)
		}
		raw, err := socketFilter(archs)
		if err != nil {
			t.Fatal(err)
		}
		insns, ok := bpf.Disassemble(raw)
		if !ok {
			t.Fatalf("%s: the program does not disassemble", goarch)
		}
		v, err := bpf.NewVM(insns)
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		return v
	}
	for _, tt := range tests {
		t.Run(tt.goarch+"/"+tt.name, func(t *testing.T) {
			got, err := vm(t, tt.goarch, tt.abi).Run(seccompData(tt.arch, tt.nr, tt.args...))
			if err != nil {
				t.Fatal(err)
			}
			if uint32(got) != tt.want {
				t.Fatalf("verdict %#x, want %#x", got, tt.want)
			}
		})
	}
	if _, ok := filterRules("riscv64", 7); ok {
		t.Error("riscv64 has a table: add its cases")
	}
}
