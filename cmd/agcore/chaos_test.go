package main

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/chaos"
)

// chaosJSON runs agcore chaos with args and --json, and decodes its report.
func chaosJSON(t *testing.T, args ...string) (int, *chaosReport, string) {
	t.Helper()
	code, stdout, stderr := runCLI(t.Context(), t, nil, append([]string{"chaos", "--json"}, args...)...)
	var rep chaosReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("agcore chaos %v: exit %d, the report is not JSON: %v\nstdout: %s\nstderr: %s", args, code, err, stdout, stderr)
	}
	return code, &rep, stderr
}

// TestChaos_InProcess runs the built-in workload under provider and tool
// faults in one process: every turn ends, faults of each kind were
// injected, the checker saw every acknowledged message and found nothing,
// and the temporary data directory is removed.
func TestChaos_InProcess(t *testing.T) {
	code, rep, stderr := chaosJSON(t, "--sessions", "8", "--turns", "3", "--fail-rate", "0.2", "--panic-rate", "0.1",
		"--hang-rate", "0.05", "--tool-error-rate", "0.05", "--truncate-rate", "0.05", "--tool-timeout", "200ms", "--seed", "11")
	if code != exitOK {
		t.Fatalf("exit %d, violations %v\n%s", code, rep.Violations, stderr)
	}
	if rep.ended() != 24 || rep.Acknowledged != 24 || rep.Journals != 8 || len(rep.Violations) != 0 || rep.Seed != 11 {
		t.Fatalf("report %+v", rep)
	}
	for _, k := range []chaos.FaultKind{chaos.FaultPanic, chaos.FaultHang, chaos.FaultToolError} {
		if rep.Faults[k] == 0 {
			t.Errorf("no %s injected: %v", k, rep.Faults)
		}
	}
	if rep.Faults[chaos.FaultRateLimited]+rep.Faults[chaos.FaultServerError]+rep.Faults[chaos.FaultTimeout] == 0 {
		t.Errorf("no model call failed: %v", rep.Faults)
	}
	if rep.Kills != 0 || rep.Kept {
		t.Errorf("kills %d, kept %v: want no kill and the directory removed", rep.Kills, rep.Kept)
	}
	if _, err := os.Stat(rep.DataDir); !os.IsNotExist(err) {
		t.Errorf("the data directory %s is still there: %v", rep.DataDir, err)
	}
}

// TestChaos_KillLoop SIGKILLs the worker (this test binary, started again
// as agcore) again and again: the run still ends with every turn ended and
// no violation, and the report counts the kills, the restarts and their
// recovery times.
func TestChaos_KillLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	// Nine tool calls in ten start 100ms late (the others panic or hang
	// until 200ms), so a worker's turns last about 3s, longer than the
	// longest kill delay: there are kills. The shortest delay leaves room
	// for a start-up under the race detector on a loaded machine.
	code, rep, stderr := chaosJSON(t, "--sessions", "10", "--turns", "30", "--fail-rate", "0.2", "--panic-rate", "0.05",
		"--hang-rate", "0.05", "--slow-tool-rate", "0.9", "--tool-timeout", "200ms", "--kill-every", "1s..2500ms", "--seed", "5")
	if code != exitOK {
		t.Fatalf("exit %d, violations %v\n%s", code, rep.Violations, stderr)
	}
	if rep.Kills == 0 || rep.Restarts != rep.Kills || rep.RecoveryP50 <= 0 || rep.RecoveryP99 < rep.RecoveryP50 {
		t.Fatalf("kills %d, restarts %d, recovery p50 %v p99 %v", rep.Kills, rep.Restarts, rep.RecoveryP50, rep.RecoveryP99)
	}
	if rep.ended() != 300 || rep.OpenTurns != 0 || rep.Journals != 10 || rep.Charges == 0 {
		t.Fatalf("report %+v", rep)
	}
}

// TestChaos_BrokenRerunFails proves that the checker can fail: with
// --broken-rerun, charge claims to be idempotent, so a worker restarted
// after a kill in the middle of a charge runs it again. The checker,
// which knows charge is not idempotent, reports the second start with
// its session and entry, and the command exits 1, keeping the data
// directory.
func TestChaos_BrokenRerunFails(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	// Every tool call waits 100ms after it was journaled as started, so
	// that a kill lands in a charge more often than not, and a worker's
	// turns last at least 3s, longer than the longest kill delay.
	code, rep, stderr := chaosJSON(t, "--sessions", "10", "--turns", "30", "--slow-tool-rate", "1",
		"--kill-every", "1s..2500ms", "--broken-rerun", "--seed", "3")
	if code != exitError {
		t.Fatalf("exit %d, want 1: the broken wrapper went unnoticed (kills %d)\n%s", code, rep.Kills, stderr)
	}
	found := false
	for _, v := range rep.Violations {
		if v.Invariant == chaos.InvToolStartedOnce && strings.Contains(v.Problem, "charge") && v.Session != "" && v.Seq > 0 {
			found = true
		}
	}
	if !found || !rep.Kept || !strings.Contains(stderr, "recovery invariants violated") {
		t.Fatalf("violations %v, kept %v, stderr %s", rep.Violations, rep.Kept, stderr)
	}
	if _, err := os.Stat(rep.DataDir); err != nil {
		t.Fatalf("the data directory of a failed run is not kept: %v", err)
	}
}

// TestChaos_AppendFailures refuses a fifth of the journal writes of one
// session: a turn whose stream stops before its end is submitted again
// with the same turn id, each turn ends once, what was acknowledged is in
// the journal once, and the runtime shuts down in time, though a refused
// write stopped the session while one of its calls ran on.
func TestChaos_AppendFailures(t *testing.T) {
	code, rep, stderr := chaosJSON(t, "--sessions", "1", "--turns", "6", "--append-fail-rate", "0.2", "--seed", "2")
	if len(rep.Violations) > 0 || len(rep.Problems) > 0 || code != exitOK {
		t.Fatalf("exit %d, violations %v, problems %v\n%s", code, rep.Violations, rep.Problems, stderr)
	}
	if rep.Faults[chaos.FaultAppendFailed] == 0 || rep.Refused == 0 || rep.Acknowledged != 6 || rep.ended() != 6 {
		t.Fatalf("report %+v", rep)
	}
}

// TestChaos_Config runs the workload of a configuration file, its
// scripted provider and its tools.
func TestChaos_Config(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# A project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "agcore.yaml")
	if err := os.WriteFile(cfg, []byte("workspace: "+ws+"\ndefault_model: mock/scripted\nproviders:\n  - name: mock\n    type: scripted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "chaos", "--model", "mock/scripted", "--json", "--sessions", "3", "--turns", "2", "--fail-rate", "0.2", "--seed", "4")
	var rep chaosReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitOK {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	if rep.Journals != 3 || rep.ended() != 6 || rep.ToolCalls == 0 || rep.Charges != 0 {
		t.Fatalf("report %+v", rep)
	}
}

func TestChaos_BadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--fail-rate", "1.5"}, "--fail-rate must be a fraction"},
		{[]string{"--panic-rate", "0.6", "--hang-rate", "0.6"}, "add up to"},
		{[]string{"--kill-every", "1s..300ms"}, "--kill-every"},
		{[]string{"--kill-every", "soon"}, "--kill-every"},
		{[]string{"--sessions", "0"}, "--sessions"},
		{[]string{"--turns", "0"}, "--turns"},
		{[]string{"--tool-timeout", "0s"}, "--tool-timeout"},
		{[]string{"--model", "mock/scripted"}, "--model applies to the agents of a configuration"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t.Context(), t, nil, append([]string{"chaos"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q: want %d naming %q", code, stderr, exitUsage, tt.want)
			}
		})
	}
}

func TestChaos_DataDirMustBeEmpty(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "chaos")
	if code != exitUsage || !strings.Contains(stderr, "not empty") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err != nil {
		t.Fatalf("the directory was touched: %v", err)
	}

	// An empty (or missing) one is used, and kept.
	empty := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", empty, "chaos", "--sessions", "2", "--turns", "1", "--json")
	var rep chaosReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitOK {
		t.Fatalf("exit %d: %v\n%s", code, err, stderr)
	}
	if !rep.Kept || rep.DataDir != empty || rep.Journals != 2 {
		t.Fatalf("report %+v", rep)
	}
	for _, p := range []string{empty, empty + ".ledger"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestParseKillEvery(t *testing.T) {
	tests := []struct {
		in     string
		lo, hi time.Duration
		ok     bool
	}{
		{"300ms..1s", 300 * time.Millisecond, time.Second, true},
		{"500ms", 500 * time.Millisecond, 500 * time.Millisecond, true},
		{" 1s .. 2s ", time.Second, 2 * time.Second, true},
		{"0s..1s", 0, 0, false},
		{"2s..1s", 0, 0, false},
		{"1s..", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		lo, hi, err := parseKillEvery(tt.in)
		if (err == nil) != tt.ok || lo != tt.lo || hi != tt.hi {
			t.Errorf("parseKillEvery(%q) = %v, %v, %v", tt.in, lo, hi, err)
		}
	}
}

// TestChaosView_Terminal: on a terminal the progress is one line redrawn
// in place, ended when the run ends, and the report follows.
func TestChaosView_Terminal(t *testing.T) {
	var b strings.Builder
	tally := newChaosTally()
	o := &chaosOptions{sessions: 2, turns: 1, killEvery: "1s..2s"}
	v := newChaosView(&b, term{tty: true}, o, tally)
	err := v.run(t.Context(), func() error {
		tally.add(chaosEvent{Type: "ack", Session: "s", TurnID: "t", Text: "x"})
		tally.add(chaosEvent{Type: "end", Outcome: "completed"})
		tally.add(chaosEvent{Type: "fault", Fault: chaos.FaultPanic})
		tally.killed(time.Now())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, ansiClearLine) || !strings.Contains(out, "turns 1/2 ended") || !strings.Contains(out, "1 kills") || !strings.HasSuffix(out, "\n\n") {
		t.Fatalf("terminal view %q", out)
	}
}

// TestChaos_KillsFasterThanStartUp: kills that always land before a
// worker has opened its sessions stop the run with an error that says to raise
// the minimum delay, instead of looping for ever.
func TestChaos_KillsFasterThanStartUp(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	code, _, stderr := runCLI(t.Context(), t, nil, "chaos", "--sessions", "2", "--turns", "1", "--kill-every", "1ns")
	if code != exitUsage || !strings.Contains(stderr, "before they had opened their sessions") || !strings.Contains(stderr, "raise its minimum") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
}

// TestShutdownChaos_Problem: a runtime that does not stop in time is
// reported as a problem of the run, not as an error that ends the run
// before the check; another error is returned.
func TestShutdownChaos_Problem(t *testing.T) {
	tally := newChaosTally()
	stuck := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	if err := shutdownChaos(t.Context(), stuck, time.Millisecond, tally.add); err != nil {
		t.Fatalf("shutdownChaos returned %v, want the problem reported instead", err)
	}
	if len(tally.problems) != 1 || !strings.Contains(tally.problems[0], "did not shut down within 1ms") {
		t.Fatalf("problems %q", tally.problems)
	}
	broken := errors.New("journal closed twice")
	if err := shutdownChaos(t.Context(), func(context.Context) error { return broken }, time.Second, tally.add); !errors.Is(err, broken) {
		t.Fatalf("shutdownChaos returned %v, want %v", err, broken)
	}
}

// TestChaos_SeedRepeatsTheFaults: two runs with one seed inject the same
// model faults (one session: its model calls come one at a time), and
// draw the same kill delays.
func TestChaos_SeedRepeatsTheFaults(t *testing.T) {
	faults := func() map[chaos.FaultKind]int64 {
		code, rep, stderr := chaosJSON(t, "--sessions", "1", "--turns", "8", "--fail-rate", "0.4", "--truncate-rate", "0.1", "--seed", "9")
		if code != exitOK {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		return rep.Faults
	}
	a, b := faults(), faults()
	if len(a) == 0 || !maps.Equal(a, b) {
		t.Fatalf("the same seed injected %v, then %v", a, b)
	}
	x, y := killDelays(9, 300*time.Millisecond, time.Second), killDelays(9, 300*time.Millisecond, time.Second)
	for i := range 100 {
		dx, dy := x(), y()
		if dx != dy || dx < 300*time.Millisecond || dx > time.Second {
			t.Fatalf("kill delay %d: %v and %v, want equal and in [300ms, 1s]", i, dx, dy)
		}
	}
}

// TestChaos_FailedRunKeepsNamedDataDir: a run on a named data directory
// that fails before its check (here, an unknown model) reports the error
// and leaves the directory alone.
func TestChaos_FailedRunKeepsNamedDataDir(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agcore.yaml")
	if err := os.WriteFile(cfg, []byte("workspace: "+dir+"\ndefault_model: mock/scripted\nproviders:\n  - name: mock\n    type: scripted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	code, _, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "--data-dir", data, "chaos", "--model", "nope/x", "--sessions", "1", "--turns", "1")
	if code != exitUsage || !strings.Contains(stderr, "nope") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
}
