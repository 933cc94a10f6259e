package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// The scripts of the approval tests. Each makes the model call bash, which
// needs approval in the default permission mode of run and chat
// (accept-edits).
const (
	// oneCallScript calls bash once, then answers the tool's result.
	oneCallScript = `rules:
  - match: {role: user, contains: "make the file"}
    reply:
      text: "Making the file."
      tool_calls:
        - {name: bash, arguments: {command: "touch made.txt"}}
  - match: {role: user, contains: "make another file"}
    reply:
      tool_calls:
        - {name: bash, arguments: {command: "touch other.txt"}}
  - match: {tool: bash}
    reply: {text: "Done with bash."}
  - match: {role: user}
    reply: {text: "Still here."}
`
	// parallelScript calls write_file twice in one reply (which needs
	// approval in the ask mode).
	parallelScript = `rules:
  - match: {role: user}
    reply:
      tool_calls:
        - {name: write_file, arguments: {path: "one.txt", content: "one"}}
        - {name: write_file, arguments: {path: "two.txt", content: "two"}}
  - match: {tool: write_file}
    reply: {text: "Done writing."}
`
	// repeatScript calls bash with the same command twice in a row, then
	// with another command.
	repeatScript = `rules:
  - match: {role: user}
    reply:
      tool_calls:
        - {name: bash, arguments: {command: "mkdir -p one"}}
  - match: {tool: bash}
    turns:
      - tool_calls:
          - {name: bash, arguments: {command: "mkdir -p one"}}
      - tool_calls:
          - {name: bash, arguments: {command: "mkdir two"}}
      - text: "Done with bash."
`
	// redirectScript calls bash twice with a command that allow rules
	// cannot vouch for (it redirects to a file), then with another.
	redirectScript = `rules:
  - match: {role: user}
    reply:
      tool_calls:
        - {name: bash, arguments: {command: "echo one >> log.txt"}}
  - match: {tool: bash}
    turns:
      - tool_calls:
          - {name: bash, arguments: {command: "echo one >> log.txt"}}
      - tool_calls:
          - {name: bash, arguments: {command: "echo one >> log.txt", description: "append again"}}
      - text: "Done with bash."
`
)

// approvalConfig writes a configuration whose model plays script, with
// the default permissions of run and chat, and returns its path, its
// workspace and its data directory.
func approvalConfig(t *testing.T, script string) (path, ws, data string) {
	t.Helper()
	path = writeConfig(t, "data_dir: data\nworkspace: ws\ndefault_model: mock/scripted\n"+
		"providers:\n  - {name: mock, type: scripted, script: script.yaml}\n", map[string]string{"script.yaml": script})
	dir := filepath.Dir(path)
	ws = filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return path, ws, filepath.Join(dir, "data")
}

// cliSession is a command running in-process whose standard input and
// output are pipes the test types into and reads line by line; terminal
// decides whether the command sees its streams as terminals.
type cliSession struct {
	stdin  *io.PipeWriter
	lines  <-chan string
	stderr *syncBuffer
	done   chan struct{}
	code   int
	// seen is everything read from stdout so far, for failure messages.
	seen []string
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startCLI runs the command line args in-process. The command is
// interrupted and waited for when the test ends.
func startCLI(t *testing.T, terminal bool, args ...string) *cliSession {
	t.Helper()
	// The deadline only turns a hang into a failure.
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &cliSession{stdin: inW, stderr: &syncBuffer{}, done: make(chan struct{})}
	a := newApp(outW, s.stderr, testEnv(t, nil))
	a.terminal = func(any) bool { return terminal }
	go func() {
		defer close(s.done)
		s.code = a.execute(ctx, args, inR)
		inR.CloseWithError(io.ErrClosedPipe)
		outW.CloseWithError(io.EOF)
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	s.lines = lines
	t.Cleanup(func() {
		cancel()
		inW.CloseWithError(io.EOF)
		for range lines {
		}
		<-s.done
	})
	return s
}

// send types line.
func (s *cliSession) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		t.Fatalf("typing %q: %v", line, err)
	}
}

// waitFor reads stdout until a line contains want, and returns that line.
func (s *cliSession) waitFor(t *testing.T, want string) string {
	t.Helper()
	for line := range s.lines {
		s.seen = append(s.seen, line)
		if strings.Contains(line, want) {
			return line
		}
	}
	t.Fatalf("output ended without %q:\n%s\nstderr:\n%s", want, strings.Join(s.seen, "\n"), s.stderr.String())
	return ""
}

// wait reads the rest of stdout, waits for the command and returns its
// exit code and everything it wrote to stdout.
func (s *cliSession) wait(t *testing.T) (int, string) {
	t.Helper()
	s.stdin.CloseWithError(io.EOF)
	for line := range s.lines {
		s.seen = append(s.seen, line)
	}
	<-s.done
	return s.code, strings.Join(s.seen, "\n")
}

// promptHeader starts the prompt of every approval.
const promptHeader = "? bash needs approval"

// toolResults returns the tool messages journaled in the data directory
// dir, in order, for every session.
func toolResults(t *testing.T, dir string) []string {
	t.Helper()
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var out []string
	for id, err := range j.Sessions(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		st, err := j.Load(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range st.History {
			if m.Role == messages.RoleTool {
				out = append(out, m.Text())
			}
		}
	}
	return out
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestRunApproval_Answers runs a turn whose model calls bash on a
// terminal: the prompt shows the tool, its command and why it asks; y runs
// the command, n refuses it and the model reads the refusal as the tool's
// result, with the reason given after n.
func TestRunApproval_Answers(t *testing.T) {
	tests := []struct {
		answer     string
		wantRun    bool
		wantVerdct string
		wantResult string
	}{
		{"y", true, "allowed once", ""},
		{"yes", true, "allowed once", ""},
		{"n", false, "denied", "permission denied for tool bash by approver: the user refused"},
		{"n use the Makefile", false, `denied: the model is told "use the Makefile"`,
			"permission denied for tool bash by approver: the user refused: use the Makefile"},
	}
	for _, tt := range tests {
		t.Run(tt.answer, func(t *testing.T) {
			cfg, ws, data := approvalConfig(t, oneCallScript)
			s := startCLI(t, true, "--config", cfg, "run", "please make the file")
			s.waitFor(t, "Making the file.")
			header := s.waitFor(t, promptHeader)
			if !strings.Contains(header, "tool bash needs execute permission in accept-edits mode") {
				t.Errorf("the prompt does not say why it asks: %q", header)
			}
			if line := s.waitFor(t, "command: "); !strings.HasSuffix(line, "command: touch made.txt") {
				t.Errorf("the prompt shows the command as %q", line)
			}
			s.waitFor(t, "y: allow once · a: allow bash with this command until agcore exits · n [reason]: deny")
			s.send(t, tt.answer)
			s.waitFor(t, tt.wantVerdct)
			code, out := s.wait(t)
			if code != exitOK {
				t.Fatalf("exit code %d\n%s\nstderr:\n%s", code, out, s.stderr.String())
			}
			if got := exists(filepath.Join(ws, "made.txt")); got != tt.wantRun {
				t.Errorf("made.txt exists: %v, want %v\n%s", got, tt.wantRun, out)
			}
			if n := strings.Count(out, promptHeader); n != 1 {
				t.Errorf("%d prompts, want 1:\n%s", n, out)
			}
			if !strings.Contains(out, "Done with bash.") {
				t.Errorf("the turn did not go on after the answer:\n%s", out)
			}
			results := toolResults(t, data)
			if len(results) != 1 {
				t.Fatalf("tool results %q, want 1", results)
			}
			if tt.wantResult != "" && results[0] != tt.wantResult {
				t.Errorf("the model read %q, want %q", results[0], tt.wantResult)
			}
			if tt.wantRun && strings.Contains(results[0], "permission denied") {
				t.Errorf("the model read %q for an allowed call", results[0])
			}
		})
	}
}

// TestRunApproval_AllowForSession answers a for the first call: the same
// command again runs without asking, and another command is asked about.
// For a command the rules cannot vouch for by its command line alone, a
// allows that exact call only: the same command with other arguments is
// asked about.
func TestRunApproval_AllowForSession(t *testing.T) {
	tests := []struct {
		name, script, scope, second string
		wantResults                 int
	}{
		{"same command", repeatScript, "bash with this command", "command: mkdir two", 3},
		{"same call", redirectScript, "this exact bash call (same arguments)", `other arguments: {"description":"append again"}`, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ws, data := approvalConfig(t, tt.script)
			s := startCLI(t, true, "--config", cfg, "run", "go")
			s.waitFor(t, promptHeader)
			s.waitFor(t, "a: allow "+tt.scope+" until agcore exits")
			s.send(t, "a")
			s.waitFor(t, "allowed: "+tt.scope+" runs without asking until agcore exits")
			s.waitFor(t, promptHeader)
			s.waitFor(t, tt.second)
			s.send(t, "n")
			s.waitFor(t, "✗ denied")
			code, out := s.wait(t)
			if code != exitOK {
				t.Fatalf("exit code %d\n%s\nstderr:\n%s", code, out, s.stderr.String())
			}
			if n := strings.Count(out, promptHeader); n != 2 {
				t.Errorf("%d prompts, want 2 (the repeated call is not asked again):\n%s", n, out)
			}
			results := toolResults(t, data)
			if len(results) != tt.wantResults {
				t.Fatalf("tool results %q, want %d", results, tt.wantResults)
			}
			for i, r := range results {
				if refused := strings.Contains(r, "the user refused"); refused != (i == 2) {
					t.Errorf("call %d: the model read %q", i+1, r)
				}
			}
			if tt.script == repeatScript && (!exists(filepath.Join(ws, "one")) || exists(filepath.Join(ws, "two"))) {
				t.Errorf("one made %v, two made %v: want the allowed command run and the refused one not",
					exists(filepath.Join(ws, "one")), exists(filepath.Join(ws, "two")))
			}
			if tt.script == redirectScript {
				if b, err := os.ReadFile(filepath.Join(ws, "log.txt")); string(b) != "one\none\n" {
					t.Errorf("log.txt = %q, %v; want the allowed call run twice", b, err)
				}
			}
		})
	}
}

// TestRunApproval_ParallelCalls runs a reply with two calls that need
// approval: they are asked one after the other, each answer going to the
// call shown.
func TestRunApproval_ParallelCalls(t *testing.T) {
	cfg, ws, _ := approvalConfig(t, parallelScript)
	s := startCLI(t, true, "--config", cfg, "run", "--permission-mode", "ask", "write two files")
	const header = "? write_file needs approval"
	first := ""
	for i := range 2 {
		s.waitFor(t, header)
		line := s.waitFor(t, "path: ")
		if i == 0 {
			first = line
			s.send(t, "y")
			s.waitFor(t, "allowed once")
		} else {
			if line == first {
				t.Errorf("the same call was asked twice: %q", line)
			}
			s.send(t, "n")
			s.waitFor(t, "denied")
		}
	}
	code, out := s.wait(t)
	if code != exitOK {
		t.Fatalf("exit code %d\n%s", code, out)
	}
	// Every question is answered before the next one is shown.
	var order []string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, header):
			order = append(order, "ask")
		case strings.HasPrefix(line, "  "+markOK+" allowed once"), strings.HasPrefix(line, "  "+markFail+" denied"):
			order = append(order, "answer")
		}
	}
	if strings.Join(order, " ") != "ask answer ask answer" {
		t.Errorf("questions and answers in the order %v, want each answered before the next:\n%s", order, out)
	}
	allowed := strings.TrimSpace(strings.TrimPrefix(first, "  path: "))
	for _, name := range []string{"one.txt", "two.txt"} {
		if got, want := exists(filepath.Join(ws, name)), name == allowed; got != want {
			t.Errorf("%s exists: %v, want %v (the call allowed was %q)", name, got, want, first)
		}
	}
}

// TestApprover_OneAtATime asks three calls at once: the prompt shows one,
// and the next only once it is answered; each answer goes to the call it
// was shown for.
func TestApprover_OneAtATime(t *testing.T) {
	ap := newApprover("", io.Discard, nil)
	var out bytes.Buffer
	p := newApprovalPrompt(ap, &out, term{}, nil)
	ctx := t.Context()
	type result struct {
		subject string
		a       toolsys.Approval
	}
	results := make(chan result, 3)
	for _, cmd := range []string{"touch a", "touch b", "touch c"} {
		go func() {
			a, err := ap.Approve(ctx, toolsys.ApprovalRequest{Request: toolsys.Request{Tool: "bash",
				Permission: toolsys.PermExecute, Args: []byte(`{"command":"` + cmd + `"}`), Subject: cmd, CallID: cmd},
				Reason: "tool bash needs execute permission in accept-edits mode"})
			if err != nil {
				t.Error(err)
			}
			results <- result{cmd, a}
		}()
	}
	for range 3 {
		p.add(<-ap.asks)
	}
	answers := map[string]bool{}
	for i, answer := range []string{"y", "n", "y"} {
		if n := strings.Count(out.String(), promptHeader); n != i+1 {
			t.Fatalf("%d prompts shown after %d answers, want %d:\n%s", n, i, i+1, out.String())
		}
		shown := p.cur.req.Subject
		p.answer(answer)
		r := <-results
		if r.subject != shown || r.a.Allow != (answer == "y") {
			t.Errorf("answer %s to %q reached %q as %+v", answer, shown, r.subject, r.a)
		}
		answers[r.subject] = r.a.Allow
	}
	if p.asking() || len(answers) != 3 {
		t.Errorf("after three answers: asking %v, answered %v", p.asking(), answers)
	}
}

// TestApprover_BadAnswerAsksAgain types answers that are none of y, a and
// n: the prompt says what it takes and waits.
func TestApprover_BadAnswerAsksAgain(t *testing.T) {
	ap := newApprover("", io.Discard, nil)
	var out bytes.Buffer
	p := newApprovalPrompt(ap, &out, term{}, nil)
	done := make(chan toolsys.Approval, 1)
	go func() {
		a, _ := ap.Approve(t.Context(), toolsys.ApprovalRequest{Request: toolsys.Request{Tool: "bash",
			Permission: toolsys.PermExecute, Args: []byte(`{"command":"ls"}`), Subject: "ls"}})
		done <- a
	}()
	p.add(<-ap.asks)
	for _, bad := range []string{"", "maybe", "yes please", "/usage"} {
		out.Reset()
		p.answer(bad)
		if !p.asking() || !strings.Contains(out.String(), "answer y, a or n") {
			t.Errorf("answer %q: asking %v, output %q", bad, p.asking(), out.String())
		}
	}
	p.answer("Y")
	if a := <-done; !a.Allow {
		t.Errorf("Y answered %+v", a)
	}
}

// TestRunApproval_NoTerminal runs calls that need approval with standard
// input piped: they are refused, the model reads why and what to change,
// and standard error says it once for the tool.
func TestRunApproval_NoTerminal(t *testing.T) {
	cfg, ws, data := approvalConfig(t, redirectScript)
	code, stdout, stderr := runCLIInput(t.Context(), t, nil, "y\ny\ny\n", "--config", cfg, "run", "append to the log")
	if code != exitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if exists(filepath.Join(ws, "log.txt")) {
		t.Errorf("a refused command ran")
	}
	if strings.Contains(stdout, promptHeader) {
		t.Errorf("asked without a terminal:\n%s", stdout)
	}
	if n := strings.Count(stderr, "bash was not run"); n != 1 {
		t.Errorf("the refusal is on stderr %d times, want once for the tool:\n%s", n, stderr)
	}
	for _, want := range []string{"standard input is not a terminal", "--allow bash (every bash call)", "--permission-mode bypass", "permissions.allow"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not name %q:\n%s", want, stderr)
		}
	}
	results := toolResults(t, data)
	if len(results) != 3 {
		t.Fatalf("tool results %q, want 3", results)
	}
	for _, r := range results {
		if !strings.HasPrefix(r, "permission denied for tool bash by approver: ") || !strings.Contains(r, "--allow bash") ||
			!strings.Contains(r, "--permission-mode") || !strings.Contains(r, "permissions.allow") {
			t.Errorf("the model read %q, want the refusal with what to change", r)
		}
	}
}

// TestRunApproval_NoTerminalSuggestsRule checks the rule the refusal of a
// simple command suggests: passing it lets the command run without asking.
func TestRunApproval_NoTerminalSuggestsRule(t *testing.T) {
	cfg, ws, _ := approvalConfig(t, oneCallScript)
	code, stdout, stderr := runCLIInput(t.Context(), t, nil, "", "--config", cfg, "run", "please make the file")
	if code != exitOK || exists(filepath.Join(ws, "made.txt")) {
		t.Fatalf("exit code %d, made.txt exists %v\nstdout:\n%s\nstderr:\n%s", code, exists(filepath.Join(ws, "made.txt")), stdout, stderr)
	}
	const rule = `--allow 'bash(touch made.txt)'`
	if !strings.Contains(stderr, rule) {
		t.Fatalf("stderr does not suggest %s:\n%s", rule, stderr)
	}
	code, stdout, stderr = runCLIInput(t.Context(), t, nil, "", "--config", cfg, "run", "--allow", "bash(touch made.txt)", "please make the file")
	if code != exitOK || !exists(filepath.Join(ws, "made.txt")) || strings.Contains(stderr, "was not run") {
		t.Errorf("with %s: exit code %d, made.txt exists %v\nstdout:\n%s\nstderr:\n%s", rule, code, exists(filepath.Join(ws, "made.txt")), stdout, stderr)
	}
}

// TestRun_PermissionFlags runs with --allow, --deny and --permission-mode:
// the rules apply, and a bad one is a usage error naming its flag.
func TestRun_PermissionFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantRun  bool
		wantErr  string
	}{
		{"allow rule", []string{"run", "--allow", "bash(touch *)", "please make the file"}, exitOK, true, ""},
		{"allow rule of chat", []string{"chat", "--allow", "bash(touch *)"}, exitOK, true, ""},
		{"deny rule in bypass mode", []string{"run", "--permission-mode", "bypass", "--deny", "bash(touch *)", "please make the file"}, exitOK, false, ""},
		{"bypass mode", []string{"run", "--permission-mode", "bypass", "please make the file"}, exitOK, true, ""},
		{"deny beats allow", []string{"run", "--allow", "bash", "--deny", "bash(touch *)", "please make the file"}, exitOK, false, ""},
		{"bad allow rule", []string{"run", "--allow", "bash(touch *", "please make the file"}, exitUsage, false, `--allow: rule "bash(touch *": missing closing parenthesis`},
		{"bad deny rule", []string{"chat", "--deny", "touch file"}, exitUsage, false, `--deny: rule "touch file": invalid character ' ' in tool name`},
		{"bad mode", []string{"run", "--permission-mode", "yolo", "please make the file"}, exitUsage, false, `--permission-mode: unknown permission mode "yolo"`},
		{"bad allow rule of serve", []string{"serve", "--addr", "127.0.0.1:0", "--allow", "bash("}, exitUsage, false, `--allow: rule "bash(": missing closing parenthesis`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ws, _ := approvalConfig(t, oneCallScript)
			code, stdout, stderr := runCLIInput(t.Context(), t, nil, "please make the file\n", append([]string{"--config", cfg}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			if got := exists(filepath.Join(ws, "made.txt")); got != tt.wantRun {
				t.Errorf("made.txt exists: %v, want %v\nstdout:\n%s\nstderr:\n%s", got, tt.wantRun, stdout, stderr)
			}
			if tt.wantErr != "" && !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr does not say %q:\n%s", tt.wantErr, stderr)
			}
			if tt.wantRun && strings.Contains(stderr, "was not run") {
				t.Errorf("an allowed call was refused:\n%s", stderr)
			}
		})
	}
}

// TestChatApproval types the answers of approvals into the chat's own
// input: a line that is no answer is asked again, y runs the call, and
// /cancel, typed while an approval waits, cancels the turn without running
// the call; the chat goes on.
func TestChatApproval(t *testing.T) {
	cfg, ws, data := approvalConfig(t, oneCallScript)
	c := startCLI(t, true, "--config", cfg, "chat")
	c.waitFor(t, "agcore chat · session ")
	c.send(t, "please make the file")
	c.waitFor(t, promptHeader)
	c.send(t, "/usage")
	c.waitFor(t, "answer y, a or n")
	c.send(t, "y")
	c.waitFor(t, "allowed once")
	c.waitFor(t, "Done with bash.")
	c.waitFor(t, "— 2 round trips")
	if !exists(filepath.Join(ws, "made.txt")) {
		t.Errorf("the allowed call did not run")
	}

	c.send(t, "please make another file")
	c.waitFor(t, promptHeader)
	c.send(t, "/cancel")
	c.waitFor(t, "the call ended before an answer")
	c.waitFor(t, markFail+" cancelled")
	c.send(t, "hello")
	c.waitFor(t, "Still here.")
	c.send(t, "/exit")
	code, out := c.wait(t)
	if code != exitOK {
		t.Fatalf("exit code %d\n%s\nstderr:\n%s", code, out, c.stderr.String())
	}
	if exists(filepath.Join(ws, "other.txt")) {
		t.Errorf("the call cancelled while it waited for approval ran")
	}
	if results := toolResults(t, data); len(results) == 0 || strings.Contains(results[0], "permission denied") {
		t.Errorf("tool results %q, want the first call run", results)
	}
}

// TestRunApproval_Expires leaves a question unanswered on a terminal past
// permissions.approval_timeout, which is longer than the call's deadline:
// the approval expires (the deadline does not run while the call waits),
// the prompt says so, and the model and the journal read "approval
// expired", not a timeout.
func TestRunApproval_Expires(t *testing.T) {
	cfg, ws, data := approvalConfig(t, oneCallScript)
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body = append(body, "permissions:\n  approval_timeout: 300ms\nlimits:\n  tool_timeout: 50ms\n"...)
	if err := os.WriteFile(cfg, body, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startCLI(t, true, "--config", cfg, "run", "please make the file")
	s.waitFor(t, promptHeader)
	// The prompt's note names the timeout; the call's ✗ line, which may
	// come first, shows the reason cut short.
	s.waitFor(t, "approval expired: no answer within 300ms")
	code, out := s.wait(t)
	if code != exitOK || !strings.Contains(out, "Done with bash.") {
		t.Fatalf("exit code %d\n%s\nstderr:\n%s", code, out, s.stderr.String())
	}
	if exists(filepath.Join(ws, "made.txt")) {
		t.Error("the command ran without an answer")
	}
	results := toolResults(t, data)
	if len(results) != 1 || !strings.Contains(results[0], "approval expired: no answer within 300ms") || strings.Contains(results[0], "timed out") {
		t.Errorf("the model read %q, want an expired approval", results)
	}
	if strings.Contains(out, "timed out") || strings.Contains(out, "deadline") {
		t.Errorf("the output reports a timeout:\n%s", out)
	}
}
