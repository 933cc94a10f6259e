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
		tcp       = 6
		x         = x32SyscallBit
		fastOpen  = msgFastOpen | 0x40 // with MSG_DONTWAIT
		unknownA  = 0x12345678
	)
	tests := []struct {
		goarch string
		name   string
		arch   uint32
		nr     uint32
		args   []uint32
		want   uint32
	}{
		{"amd64", "MPTCP socket", auditArchX8664, 41, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"amd64", "TCP socket", auditArchX8664, 41, []uint32{2, 1, tcp}, allow},
		{"amd64", "default protocol", auditArchX8664, 41, []uint32{2, 1, 0}, allow},
		{"amd64", "x32 MPTCP socket", auditArchX8664, 41 | x, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"amd64", "sendto with MSG_FASTOPEN", auditArchX8664, 44, []uint32{3, 0, 1, fastOpen}, noSupport},
		{"amd64", "sendto", auditArchX8664, 44, []uint32{3, 0, 1, 0x40}, allow},
		{"amd64", "sendmsg with MSG_FASTOPEN", auditArchX8664, 46, []uint32{3, 0, msgFastOpen}, noSupport},
		{"amd64", "sendmsg", auditArchX8664, 46, []uint32{3, 0, 0, msgFastOpen}, allow},
		{"amd64", "sendmmsg with MSG_FASTOPEN", auditArchX8664, 307, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"amd64", "x32 sendto with MSG_FASTOPEN", auditArchX8664, 44 | x, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"amd64", "x32 sendmsg with MSG_FASTOPEN", auditArchX8664, 518 | x, []uint32{3, 0, msgFastOpen}, noSupport},
		{"amd64", "x32 sendmmsg with MSG_FASTOPEN", auditArchX8664, 538 | x, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"amd64", "io_uring_setup", auditArchX8664, 425, nil, noSys},
		{"amd64", "x32 io_uring_setup", auditArchX8664, 425 | x, nil, noSys},
		{"amd64", "read", auditArchX8664, 0, []uint32{0, 0, ipprotoMPTCP, msgFastOpen}, allow},
		{"amd64", "connect", auditArchX8664, 42, []uint32{3, 0, ipprotoMPTCP}, allow},
		{"amd64", "i386 MPTCP socket", auditArchI386, 359, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"amd64", "i386 TCP socket", auditArchI386, 359, []uint32{2, 1, tcp}, allow},
		{"amd64", "i386 sendto with MSG_FASTOPEN", auditArchI386, 369, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"amd64", "i386 sendmsg with MSG_FASTOPEN", auditArchI386, 370, []uint32{3, 0, msgFastOpen}, noSupport},
		{"amd64", "i386 sendmmsg with MSG_FASTOPEN", auditArchI386, 345, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"amd64", "i386 socketcall", auditArchI386, 102, nil, noSys},
		{"amd64", "i386 read", auditArchI386, 3, nil, allow},
		{"amd64", "unknown architecture", unknownA, 41, []uint32{2, 1, tcp}, noSys},
		{"arm64", "MPTCP socket", auditArchAarch64, 198, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"arm64", "TCP socket", auditArchAarch64, 198, []uint32{2, 1, tcp}, allow},
		{"arm64", "sendto with MSG_FASTOPEN", auditArchAarch64, 206, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"arm64", "sendmsg with MSG_FASTOPEN", auditArchAarch64, 211, []uint32{3, 0, msgFastOpen}, noSupport},
		{"arm64", "sendmmsg with MSG_FASTOPEN", auditArchAarch64, 269, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"arm64", "sendto", auditArchAarch64, 206, []uint32{3, 0, 1, 0}, allow},
		{"arm64", "io_uring_setup", auditArchAarch64, 425, nil, noSys},
		{"arm64", "arm MPTCP socket", auditArchARM, 281, []uint32{2, 1, ipprotoMPTCP}, noProto},
		{"arm64", "arm TCP socket", auditArchARM, 281, []uint32{2, 1, tcp}, allow},
		{"arm64", "arm sendto with MSG_FASTOPEN", auditArchARM, 290, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"arm64", "arm sendmsg with MSG_FASTOPEN", auditArchARM, 296, []uint32{3, 0, msgFastOpen}, noSupport},
		{"arm64", "arm sendmmsg with MSG_FASTOPEN", auditArchARM, 374, []uint32{3, 0, 1, msgFastOpen}, noSupport},
		{"arm64", "x86-64 on arm64", auditArchX8664, 41, []uint32{2, 1, ipprotoMPTCP}, noSys},
	}
	vms := map[string]*bpf.VM{}
	for _, goarch := range []string{"amd64", "arm64"} {
		archs, ok := filterRules(goarch)
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
		vm, err := bpf.NewVM(insns)
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		vms[goarch] = vm
	}
	for _, tt := range tests {
		t.Run(tt.goarch+"/"+tt.name, func(t *testing.T) {
			got, err := vms[tt.goarch].Run(seccompData(tt.arch, tt.nr, tt.args...))
			if err != nil {
				t.Fatal(err)
			}
			if uint32(got) != tt.want {
				t.Fatalf("verdict %#x, want %#x", got, tt.want)
			}
		})
	}
	if _, ok := filterRules("riscv64"); ok {
		t.Error("riscv64 has a table: add its cases")
	}
}
