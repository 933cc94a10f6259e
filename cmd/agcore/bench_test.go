package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/internal/benchsuite"
)

// runBench runs `agcore bench` with args in-process.
func runBench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, log: zerolog.Nop()}
	cmd := newBenchCmd(a)
	cmd.SetArgs(args)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(t.Context())
	return stdout.String(), err
}

func TestBench_Usage(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantUsage bool
		wantOut   string
	}{
		{"unknown workload", []string{"--only", "journal,warp-drive"}, true, ""},
		{"positional argument", []string{"journal"}, true, ""},
		{"help lists the workloads", []string{"--help"}, false, "turn-overhead"},
		{"help lists the idle-sessions workload", []string{"--help"}, false, "idle-sessions  RSS and heap per idle session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runBench(t, tt.args...)
			_, isUsage := errors.AsType[*usageError](err)
			if isUsage != tt.wantUsage {
				t.Fatalf("err = %v (usage error: %v), want usage error: %v", err, isUsage, tt.wantUsage)
			}
			if !tt.wantUsage && err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("output lacks %q:\n%s", tt.wantOut, out)
			}
		})
	}
}

func TestBench_Journal(t *testing.T) {
	dir := t.TempDir()
	out, err := runBench(t, "--only", "journal", "--quick", "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"machine: go1.", "journal appends", "sync", "batch", "appends/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}

	out, err = runBench(t, "--only", "journal", "--quick", "--json", "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	var rep benchsuite.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if !rep.Quick || rep.Journal == nil || rep.Journal.BatchOverSync <= 0 || rep.Sessions != nil {
		t.Errorf("JSON report: %s", out)
	}
}
