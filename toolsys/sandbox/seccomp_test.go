package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// seccompData lays out the fields of struct seccomp_data the filter reads.
// The kernel loads them in the machine's byte order, the BPF VM of x/net
// in big-endian order: each field is written for the VM, at its offset.
func seccompData(arch, nr, arg2 uint32) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	binary.BigEndian.PutUint32(b[offArg2:], arg2)
	return b
}

func TestSocketFilter(t *testing.T) {
	const (
		allow    = seccompRetAllow
		noProto  = seccompRetErrno | errnoEPROTONOSP
		noSys    = seccompRetErrno | errnoENOSYS
		tcp      = 6
		unknownA = 0x12345678
	)
	tests := []struct {
		goarch         string
		name           string
		arch, nr, arg2 uint32
		want           uint32
	}{
		{"amd64", "MPTCP socket", auditArchX8664, 41, ipprotoMPTCP, noProto},
		{"amd64", "TCP socket", auditArchX8664, 41, tcp, allow},
		{"amd64", "default protocol", auditArchX8664, 41, 0, allow},
		{"amd64", "x32 MPTCP socket", auditArchX8664, 41 | x32SyscallBit, ipprotoMPTCP, noProto},
		{"amd64", "io_uring_setup", auditArchX8664, 425, 0, noSys},
		{"amd64", "x32 io_uring_setup", auditArchX8664, 425 | x32SyscallBit, 0, noSys},
		{"amd64", "read", auditArchX8664, 0, ipprotoMPTCP, allow},
		{"amd64", "connect", auditArchX8664, 42, ipprotoMPTCP, allow},
		{"amd64", "i386 MPTCP socket", auditArchI386, 359, ipprotoMPTCP, noProto},
		{"amd64", "i386 TCP socket", auditArchI386, 359, tcp, allow},
		{"amd64", "i386 socketcall", auditArchI386, 102, 0, noSys},
		{"amd64", "i386 read", auditArchI386, 3, 0, allow},
		{"amd64", "unknown architecture", unknownA, 41, tcp, noSys},
		{"arm64", "MPTCP socket", auditArchAarch64, 198, ipprotoMPTCP, noProto},
		{"arm64", "TCP socket", auditArchAarch64, 198, tcp, allow},
		{"arm64", "io_uring_setup", auditArchAarch64, 425, 0, noSys},
		{"arm64", "arm MPTCP socket", auditArchARM, 281, ipprotoMPTCP, noProto},
		{"arm64", "arm TCP socket", auditArchARM, 281, tcp, allow},
		{"arm64", "x86-64 on arm64", auditArchX8664, 41, ipprotoMPTCP, noSys},
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
			got, err := vms[tt.goarch].Run(seccompData(tt.arch, tt.nr, tt.arg2))
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
