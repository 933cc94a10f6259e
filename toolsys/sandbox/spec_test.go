package sandbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func validSpec() spec {
	return spec{
		Path: "/usr/bin/bash", Args: []string{"bash", "-c", "true"}, Env: []string{"PATH=/usr/bin", "EMPTY="},
		Read: []string{"/usr"}, List: []string{"/etc"}, Write: []string{"/tmp/ws"}, Ports: []int{443},
	}
}

func TestDecodeSpec(t *testing.T) {
	good, err := validSpec().encode()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{name: "valid", in: string(good)},
		{name: "relative program", in: `{"path":"bash","args":["bash"]}`, wantErr: `path "bash" is not an absolute path`},
		{name: "no args", in: `{"path":"/bin/sh"}`, wantErr: "args is empty"},
		{name: "NUL in an argument", in: `{"path":"/bin/sh","args":["sh","a\u0000b"]}`, wantErr: "NUL byte"},
		{name: "env without =", in: `{"path":"/bin/sh","args":["sh"],"env":["PATH"]}`, wantErr: `env: "PATH" is not NAME=value`},
		{name: "relative readable path", in: `{"path":"/bin/sh","args":["sh"],"read":["usr"]}`, wantErr: `read: "usr" is not an absolute path`},
		{name: "relative listable path", in: `{"path":"/bin/sh","args":["sh"],"list":["etc"]}`, wantErr: `list: "etc" is not an absolute path`},
		{name: "relative writable path", in: `{"path":"/bin/sh","args":["sh"],"write":["."]}`, wantErr: `write: "." is not an absolute path`},
		{name: "port zero", in: `{"path":"/bin/sh","args":["sh"],"ports":[0]}`, wantErr: "ports: 0 is not a TCP port"},
		{name: "port too large", in: `{"path":"/bin/sh","args":["sh"],"ports":[65536]}`, wantErr: "ports: 65536 is not a TCP port"},
		{name: "unknown field", in: `{"path":"/bin/sh","args":["sh"],"root":true}`, wantErr: `unknown field "root"`},
		{name: "trailing data", in: `{"path":"/bin/sh","args":["sh"]} {}`, wantErr: "trailing data"},
		{name: "not JSON", in: `path=/bin/sh`, wantErr: "decode spec"},
		{name: "too large", in: `{"path":"/bin/sh","args":["` + strings.Repeat("a", maxSpec) + `"]}`, wantErr: "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeSpec(strings.NewReader(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(validSpec(), got); diff != "" {
					t.Fatalf("spec (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// FuzzDecodeSpec checks that the helper never accepts a spec that breaks
// what it relies on, and that an accepted one survives a round trip.
func FuzzDecodeSpec(f *testing.F) {
	good, _ := validSpec().encode()
	f.Add(good)
	f.Add([]byte(`{"path":"/bin/sh","args":["sh"],"ports":[1,65535]}`))
	f.Add([]byte(`{"path":"/bin/sh","args":["sh"],"env":["A=\u0000"]}`))
	f.Add([]byte(`{"path":"/","args":[""],"read":["/"],"list":["/"],"write":["/"]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeSpec(strings.NewReader(string(data)))
		if err != nil {
			return
		}
		if err := s.validate(); err != nil {
			t.Fatalf("decoded an invalid spec: %v", err)
		}
		again, err := s.encode()
		if err != nil {
			t.Fatal(err)
		}
		s2, err := decodeSpec(strings.NewReader(string(again)))
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if diff := cmp.Diff(s, s2); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		abi     int
		wantErr string
	}{
		{name: "confined", in: "confined 7\n", abi: 7},
		{name: "error", in: "error landlock: no\n", wantErr: "landlock: no"},
		{name: "exec failed after confining", in: "confined 7\nerror execute /bin/x: ENOENT\n", wantErr: "execute /bin/x"},
		{name: "nothing", in: "", wantErr: errNoAnswer.Error()},
		{name: "below the minimum", in: "confined 3\n", wantErr: `answered "confined 3"`},
		{name: "not a number", in: "confined seven\n", wantErr: `answered "confined seven"`},
		{name: "garbage", in: "\xff\xfe\n", wantErr: `answered "?"`},
		{name: "bare error", in: "error\n", wantErr: "unknown error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			abi, err := parseStatus([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil || abi != tt.abi {
					t.Fatalf("parseStatus = %d, %v; want %d", abi, err, tt.abi)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if tt.in == "" && !errors.Is(err, errNoAnswer) {
				t.Fatalf("err = %v, want errNoAnswer", err)
			}
		})
	}
}

// FuzzParseStatus checks that whatever a helper writes, the parent either
// gets an ABI it can confine with or an error, never a panic.
func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{"confined 7\n", "confined 4", "error x\n", "", "\n\n", "confined -1\n", "confined 99999999999999999999\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		abi, err := parseStatus(data)
		if err == nil && abi < MinABI {
			t.Fatalf("accepted ABI %d", abi)
		}
		if err != nil && abi != 0 {
			t.Fatalf("ABI %d with error %v", abi, err)
		}
	})
}
