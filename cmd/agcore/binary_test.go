package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/messages"
)

// buildBinary builds the agcore command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "agcore")
	if out, err := exec.CommandContext(t.Context(), gobin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// userEnv is the test's environment without the variables that would point
// the demo at a real endpoint.
func userEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	return env
}

// TestBinary builds the command once and runs it as a user would.
func TestBinary(t *testing.T) {
	bin := buildBinary(t)
	t.Run("commands", func(t *testing.T) { testCommands(t, bin) })
	t.Run("help on every command", func(t *testing.T) { testHelp(t, bin) })
	t.Run("run then sessions", func(t *testing.T) { testRunAndSessions(t, bin) })
	t.Run("chat with piped input", func(t *testing.T) { testChat(t, bin) })
	t.Run("approvals on a terminal", func(t *testing.T) { testApprovalPTY(t, bin) })
	t.Run("bad config", func(t *testing.T) { testBadConfig(t, bin) })
	t.Run("mock-llm until SIGTERM", func(t *testing.T) { testMockLLMSignal(t, bin) })
}

// result is what a run of the binary gave.
type result struct {
	code           int
	stdout, stderr string
}

// execBin runs the binary with args in dir (the test's temporary directory
// when empty), stdin as its input, and the test's environment without
// OPENAI_* variables plus env.
func execBin(t *testing.T, bin, dir, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	// What a command keeps in the temporary directory (the demo's
	// workspace) goes with the test.
	cmd.Env = append(append(userEnv(), "TMPDIR="+t.TempDir()), env...)
	cmd.Dir = dir
	if dir == "" {
		cmd.Dir = t.TempDir()
	}
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, stdout.String(), stderr.String()}
}

// check fails the test unless r has the exit code and every want string.
func (r result) check(t *testing.T, wantCode int, want ...string) {
	t.Helper()
	if r.code != wantCode {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, wantCode, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", w, r.stdout, r.stderr)
		}
	}
}

// testCommands checks the exit code and output of a few command lines.
func testCommands(t *testing.T, bin string) {
	tests := []struct {
		args     []string
		wantCode int
		want     []string // in stdout and stderr together
	}{
		{[]string{"demo"}, exitOK, []string{"4 sessions × 1 turn", `demo-4   → list_dir {"path":"."}`, "SESSION", "4 of 4 sessions completed · 16 tool calls"}},
		{[]string{"demo", "--sessions", "6"}, exitOK, []string{"demo-6 ", "6 of 6 sessions completed · 24 tool calls"}},
		{[]string{"version"}, exitOK, []string{"agcore "}},
		{[]string{"--help"}, exitOK, []string{"Available Commands:"}},
		{[]string{"nope"}, exitUsage, []string{`unknown command "nope"`}},
		{[]string{"sessions", "frobnicate"}, exitUsage, []string{`unknown command "frobnicate" for "agcore sessions"`}},
		{[]string{"run"}, exitUsage, []string{"takes one prompt argument"}},
		{[]string{"run", "--model", "foo/bar", "hi"}, exitUsage, []string{`--model: unknown provider "foo" (known: openai, mock)`}},
		{[]string{"tools", "schema", "nope"}, exitUsage, []string{`no tool named "nope"`}},
		{[]string{"tools", "schema", "read_file"}, exitOK, []string{"read_file — ", `"path": {`, `"type": "object"`}},
		{[]string{"tools", "list"}, exitOK, []string{"NAME", "read_file", "read-only", "bash", "execute", "shell"}},
		{[]string{"sessions", "export", "x", "--format", "csv"}, exitUsage, []string{"--format: want jsonl or sharegpt"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dataDir := filepath.Join(t.TempDir(), "data")
			execBin(t, bin, "", "", []string{"AGCORE_DATA_DIR=" + dataDir}, tt.args...).check(t, tt.wantCode, tt.want...)
		})
	}
}

// testHelp runs --help on every command of the command tree (so that a
// new command is covered without being listed here) and checks that each
// has a usage line, examples and the global flags.
func testHelp(t *testing.T, bin string) {
	root := newRootCmd(newApp(io.Discard, io.Discard, func(string) string { return "" }))
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		t.Run(strings.Join(append([]string{"agcore"}, path...), " "), func(t *testing.T) {
			execBin(t, bin, "", "", nil, append(slices.Clone(path), "--help")...).check(t, exitOK, "Usage:", "Examples:", "--config", "--data-dir")
		})
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(root, nil)
}

// sampleWorkspace returns a directory holding the files the mock's demo
// script reads.
func sampleWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range sampleProject() {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var sessionLineRE = regexp.MustCompile(`session (\S+)`)

// testRunAndSessions runs one turn on the scripted mock into a data
// directory, then reads it back with every sessions subcommand.
func testRunAndSessions(t *testing.T, bin string) {
	ws, data := sampleWorkspace(t), t.TempDir()
	dd := "--data-dir=" + data
	r := execBin(t, bin, ws, "", nil, "run", dd, "--model", "mock/scripted", "Summarise this project")
	r.check(t, exitOK, "Let me look at the workspace first.\n", `✓ list_dir {"path":"."}`, `✓ read_file {"path":"go.mod"}`,
		"✓ write_file", "wrote a short summary of the project to SUMMARY.md.\n", "— 4 round trips")
	m := sessionLineRE.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("run did not name its session on stderr:\n%s", r.stderr)
	}
	id := m[1]
	if _, err := os.Stat(filepath.Join(ws, "SUMMARY.md")); err != nil {
		t.Errorf("SUMMARY.md was not written: %v", err)
	}

	// A second turn of the same session, as JSON lines.
	r = execBin(t, bin, ws, "", nil, "run", dd, "--model", "mock/scripted", "--session", id, "--json", "Again")
	r.check(t, exitOK, `"type":"turn_started"`, `"type":"tool_finished"`, `"outcome":"completed"`)
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if _, err := messages.UnmarshalEvent([]byte(l)); err != nil {
			t.Errorf("--json line %q: %v", l, err)
		}
	}

	execBin(t, bin, ws, "", nil, "sessions", "list", dd).check(t, exitOK, "SESSION", id, "  2  ", "Summarise this project")
	execBin(t, bin, ws, "", nil, "sessions", "list", dd, "--json").check(t, exitOK, `"session":"`+id+`"`, `"turns":2`)
	execBin(t, bin, ws, "", nil, "sessions", "show", id, dd).check(t, exitOK, "turns     2", "user: Summarise this project",
		`→ read_file {"path":"README.md"}`, "user: Again")
	execBin(t, bin, ws, "", nil, "sessions", "replay", id, dd).check(t, exitOK, "#1    activated", "user_message       turn 1: \"Summarise this project\"",
		"tool_call_started  list_dir", "tool_result        ✓ read_file", "turn_completed     turn 2 completed · 4 round trips")
	r = execBin(t, bin, ws, "", nil, "sessions", "export", id, dd)
	r.check(t, exitOK, `"role":"user","content":"Summarise this project"`)
	if n := strings.Count(r.stdout, "\n"); n != 18 {
		t.Errorf("jsonl export has %d lines, want 18 (2 turns of 9 messages):\n%s", n, r.stdout)
	}
	out := filepath.Join(t.TempDir(), "chat.json")
	execBin(t, bin, ws, "", nil, "sessions", "export", id, dd, "--format", "sharegpt", "-o", out).check(t, exitOK)
	var sg struct {
		Conversations []struct{ From, Value string }
	}
	if b, err := os.ReadFile(out); err != nil || json.Unmarshal(b, &sg) != nil || len(sg.Conversations) != 18 ||
		sg.Conversations[0].From != "human" || !strings.Contains(sg.Conversations[1].Value, "<tool_call>") {
		t.Errorf("sharegpt export: %v\n%+v", err, sg)
	}
	execBin(t, bin, ws, "", nil, "sessions", "show", "nope", dd).check(t, exitError, `no session "nope"`)
	execBin(t, bin, ws, "", nil, "tools", "list", dd).check(t, exitOK, "read_file     builtin  read-only   files     builtin,files  4 ")
}

// testChat plays a chat from piped input.
func testChat(t *testing.T, bin string) {
	ws, data := sampleWorkspace(t), t.TempDir()
	r := execBin(t, bin, ws, "Summarise this project\n/usage\n/agent\n/agent ghost\n/bogus\n/exit\nnever sent\n",
		nil, "chat", "--data-dir", data, "--model", "mock/scripted")
	r.check(t, exitOK, "agcore chat · session ", "Let me look at the workspace first.", "✓ write_file", "— 4 round trips",
		"usage: 1 turns · ", "agent: default", `no agent named "ghost"`, "unknown command /bogus")
	if strings.Contains(r.stdout, "never sent") || strings.Count(r.stdout, "— 4 round trips") != 1 {
		t.Errorf("chat went on after /exit:\n%s", r.stdout)
	}
	// The end of input leaves too.
	execBin(t, bin, ws, "hello\n", nil, "chat", "--data-dir", data, "--model", "mock/scripted").check(t, exitOK, "— 4 round trips")
}

// testBadConfig checks that a bad configuration file exits with 2 and a
// message naming the file, the line and the key.
func testBadConfig(t *testing.T, bin string) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "agcore.yaml")
	if err := os.WriteFile(bad, []byte("agents:\n  - name: a\n  - name: b\n    model: foo/bar\nlimits:\n  mid_turn: drop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{bad + `:4: agents[1].model: unknown provider "foo" (known: openai, mock)`,
		bad + `:6: limits.mid_turn: unknown mid-turn policy "drop"`}
	execBin(t, bin, dir, "", nil, "--config", bad, "run", "hi").check(t, exitUsage, want...)
	execBin(t, bin, dir, "", []string{"AGCORE_CONFIG=" + bad}, "tools", "list").check(t, exitUsage, want...)
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(typo, []byte("limits:\n  max_round_trip: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	execBin(t, bin, dir, "", nil, "--config", typo, "tools", "list").check(t, exitUsage,
		typo+`:2: limits.max_round_trip: unknown key; did you mean "max_round_trips"?`)
	execBin(t, bin, dir, "", nil, "--config", filepath.Join(dir, "missing.yaml"), "tools", "list").check(t, exitUsage, "missing.yaml: no such file")
}

// testMockLLMSignal checks that mock-llm serves until SIGTERM and then
// exits cleanly.
func testMockLLMSignal(t *testing.T, bin string) {
	cmd := exec.CommandContext(t.Context(), bin, "mock-llm", "--addr", "127.0.0.1:0")
	cmd.Env = userEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("mock-llm printed nothing; stderr:\n%s", stderr.String())
	}
	url := strings.TrimPrefix(lines.Text(), "mock LLM listening on ")
	resp, err := http.Get(url + "/models")
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s/models: %s", url, resp.Status)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, stdout) // until the process closes it
	if err := cmd.Wait(); err != nil {
		t.Errorf("mock-llm after SIGTERM: %v; stderr:\n%s", err, stderr.String())
	}
}
