package sandbox

import (
	"strings"
	"testing"
	"time"
)

func TestConfig_Validate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "zero", cfg: Config{}},
		{name: "full", cfg: Config{Mode: Warn, AllowPorts: []int{1, 443, 65535}, ExtraReadPaths: []string{"/opt/x"},
			ExtraWritePaths: []string{"/var/cache/go"}, Env: []string{"GOCACHE=/var/cache/go", "EMPTY="}, Executable: "/usr/bin/agcore", StartTimeout: time.Second}},
		{name: "mode", cfg: Config{Mode: 7}, wantErr: "sandbox: Mode: Mode(7) is not Refuse or Warn"},
		{name: "port zero", cfg: Config{AllowPorts: []int{443, 0}}, wantErr: "sandbox: AllowPorts[1]: 0 is not a TCP port (1-65535)"},
		{name: "port too large", cfg: Config{AllowPorts: []int{70000}}, wantErr: "sandbox: AllowPorts[0]: 70000 is not a TCP port"},
		{name: "relative read path", cfg: Config{ExtraReadPaths: []string{"tools"}}, wantErr: `sandbox: ExtraReadPaths[0]: "tools" is not an absolute path`},
		{name: "relative write path", cfg: Config{ExtraWritePaths: []string{"/ok", "cache"}}, wantErr: `sandbox: ExtraWritePaths[1]: "cache" is not an absolute path`},
		{name: "NUL", cfg: Config{ExtraReadPaths: []string{"/a\x00b"}}, wantErr: "contains a NUL byte"},
		{name: "env without =", cfg: Config{Env: []string{"GOCACHE"}}, wantErr: `sandbox: Env[0]: "GOCACHE" is not NAME=value`},
		{name: "env without a name", cfg: Config{Env: []string{"A=1", "=x"}}, wantErr: `sandbox: Env[1]: "=x" is not NAME=value`},
		{name: "env sets HOME", cfg: Config{Env: []string{"HOME=/root"}}, wantErr: "sandbox: Env[0]: HOME is the command's private directory and cannot be set"},
		{name: "relative executable", cfg: Config{Executable: "agcore"}, wantErr: `sandbox: Executable: "agcore" is not an absolute path`},
		{name: "negative timeout", cfg: Config{StartTimeout: -time.Second}, wantErr: "sandbox: StartTimeout: -1s is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Refuse, "refuse": Refuse, "warn": Warn} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", in, got, err, want)
		}
		if in != "" && want.String() != in {
			t.Errorf("%v.String() = %q", want, want.String())
		}
	}
	if _, err := ParseMode("off"); err == nil || !strings.Contains(err.Error(), `sandbox mode "off": want refuse or warn`) {
		t.Errorf("ParseMode(off) = %v", err)
	}
}
