package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/memory"
)

// slowScript answers "run the slow command" with a bash call that runs
// until it is cancelled, and anything else with a short text.
const slowScript = `rules:
  - match: {role: user, contains: "run the slow command"}
    reply:
      text: "Starting the slow command."
      tool_calls:
        - {name: bash, arguments: {command: "sleep 300"}}
  - match: {role: user}
    reply: {text: "Still here."}
`

// chatSession is `agcore chat` running in-process: the test types lines
// into stdin and reads stdout line by line.
type chatSession struct {
	stdin *io.PipeWriter
	lines <-chan string
	// done is closed when the command has returned err.
	done chan struct{}
	err  error
	// seen is everything read from stdout so far, for failure messages.
	seen []string
}

// startChat runs `agcore chat` in-process with a configuration whose model
// plays slowScript and whose permissions allow bash. The chat is stopped
// and waited for when the test ends.
func startChat(t *testing.T) *chatSession {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"script.yaml": slowScript,
		"agcore.yaml": "data_dir: data\nworkspace: ws\ndefault_model: mock/scripted\n" +
			"providers:\n  - {name: mock, type: scripted, script: script.yaml}\npermissions:\n  mode: bypass\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The deadline only turns a hang into a failure: cancelling the
	// command's context interrupts the chat, which ends its output.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := &app{stdout: outW, stderr: io.Discard, getenv: func(string) string { return "" }, log: zerolog.Nop()}
	root := newRootCmd(a)
	root.SetArgs([]string{"--config", filepath.Join(dir, "agcore.yaml"), "chat"})
	root.SetIn(inR)
	root.SetOut(outW)
	root.SetErr(io.Discard)
	c := &chatSession{stdin: inW, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.err = root.ExecuteContext(ctx)
		// Typing into a chat that has ended fails instead of blocking.
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
	c.lines = lines
	t.Cleanup(func() {
		cancel()
		inW.CloseWithError(io.EOF)
		for range lines {
		}
		<-c.done
	})
	return c
}

// send types line into the chat.
func (c *chatSession) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		t.Fatalf("typing %q: %v", line, err)
	}
}

// waitFor reads stdout until a line contains want, and returns that line.
func (c *chatSession) waitFor(t *testing.T, want string) string {
	t.Helper()
	for line := range c.lines {
		c.seen = append(c.seen, line)
		if strings.Contains(line, want) {
			return line
		}
	}
	t.Fatalf("output ended without %q:\n%s", want, strings.Join(c.seen, "\n"))
	return ""
}

// TestChat_CancelWhileStreaming types /cancel while a tool call of the
// reply runs: the turn ends cancelled, /history shows the call answered as
// interrupted, and the chat goes on.
func TestChat_CancelWhileStreaming(t *testing.T) {
	c := startChat(t)
	c.waitFor(t, "agcore chat · session ")

	c.send(t, "please run the slow command")
	// Off a terminal the renderer ends the streamed text's line when the
	// first tool call starts, so a complete line means bash is running.
	c.waitFor(t, "Starting the slow command.")
	c.send(t, "/cancel")
	if line := c.waitFor(t, "cancelled"); !strings.HasPrefix(line, markFail+" cancelled · 1 round trip") {
		t.Errorf("turn summary %q, want a cancelled turn of 1 round trip", line)
	}

	c.send(t, "/usage")
	c.waitFor(t, "usage: 1 turns · ")
	// The cancelled call is answered as the model was told.
	c.send(t, "/history")
	c.waitFor(t, "→ bash ")
	if line := c.waitFor(t, "tool "); !strings.HasSuffix(line, ": "+memory.InterruptedResult) {
		t.Errorf("/history shows the cancelled call as %q, want it answered %q", line, memory.InterruptedResult)
	}
	c.send(t, "hello")
	c.waitFor(t, "Still here.")
	c.waitFor(t, "— 1 round trip")
	c.send(t, "/exit")
	for line := range c.lines {
		c.seen = append(c.seen, line)
	}
	<-c.done
	if c.err != nil {
		t.Fatalf("chat: %v\noutput:\n%s", c.err, strings.Join(c.seen, "\n"))
	}
}
