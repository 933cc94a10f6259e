package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// turnEvents is a turn with text, two parallel tool calls (one failing)
// and a final answer.
func turnEvents() []messages.Event {
	return []messages.Event{
		messages.TurnStarted{TurnID: "t1"},
		messages.TextDelta{Text: "Let me "},
		messages.TextDelta{Text: "look."},
		messages.ToolStarted{CallID: "c1", Name: "read_file", Arguments: "{\n  \"path\": \"a.go\"\n}"},
		messages.ToolStarted{CallID: "c2", Name: "read_file", Arguments: `{"path":"b.go"}`},
		messages.ToolFinished{CallID: "c2", Name: "read_file", IsError: true, Content: "no such file", Duration: 3 * time.Millisecond},
		messages.ToolFinished{CallID: "c1", Name: "read_file", Content: "package a\n", Duration: 12 * time.Millisecond},
		messages.TextDelta{Text: "Done.\x1b[2J"},
		messages.TurnEnded{Outcome: messages.OutcomeCompleted, RoundTrips: 2, Usage: messages.Usage{TotalTokens: 120}},
	}
}

func TestRenderer(t *testing.T) {
	tests := []struct {
		name string
		term term
		want string
	}{
		{"plain", term{}, "Let me look.\n" +
			"✗ read_file {\"path\":\"b.go\"} 3ms · no such file\n" +
			"✓ read_file {\"path\":\"a.go\"} 12ms\n" +
			"Done.[2J\n" +
			"— 2 round trips · 120 tokens · 500ms\n"},
		{"terminal", term{tty: true}, "Let me look.\n" +
			"\r\x1b[2K⠋ read_file {\"path\":\"a.go\"}\n" +
			"\x1b[1A\r\x1b[2K⠋ read_file {\"path\":\"a.go\"}\n\r\x1b[2K⠋ read_file {\"path\":\"b.go\"}\n" +
			"\x1b[2A\r\x1b[2K⠋ read_file {\"path\":\"a.go\"}\n\r\x1b[2K✗ read_file {\"path\":\"b.go\"} 3ms · no such file\n" +
			"\x1b[2A\r\x1b[2K✓ read_file {\"path\":\"a.go\"} 12ms\n\r\x1b[2K✗ read_file {\"path\":\"b.go\"} 3ms · no such file\n" +
			"Done.[2J\n" +
			"— 2 round trips · 120 tokens · 500ms\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			r := newRenderer(&buf, io.Discard, tt.term, false)
			clock := time.Unix(0, 0)
			r.now = func() time.Time { clock = clock.Add(500 * time.Millisecond); return clock }
			for _, ev := range turnEvents() {
				r.event(ev)
			}
			if got := buf.String(); got != tt.want {
				t.Errorf("rendered\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestRenderer_Outcomes checks the status line of each outcome: a failed
// turn, or one stopped at a limit, gets none (the command reports it once,
// on standard error), and its error events are not repeated; an error
// that is not why the turn ended goes to the error stream.
func TestRenderer_Outcomes(t *testing.T) {
	tests := []struct {
		name        string
		events      []messages.Event
		want, wantE string
	}{
		{"cancelled", []messages.Event{messages.TurnEnded{Outcome: messages.OutcomeCancelled, RoundTrips: 1}}, "✗ cancelled · 1 round trip\n", ""},
		{"failed", []messages.Event{
			messages.TextDelta{Text: "Let me look."},
			messages.ErrorEvent{Message: "provider down", Kind: "server"},
			messages.TurnEnded{Outcome: messages.OutcomeFailed, Reason: "provider down"},
		}, "Let me look.\n", ""},
		{"limit", []messages.Event{messages.TurnEnded{Outcome: messages.OutcomeLimit, Reason: "max round trips", Cost: 0.5}}, "", ""},
		{"an error besides the outcome", []messages.Event{
			messages.ErrorEvent{Message: "memory: index lagging", Kind: "runtime"},
			messages.TurnEnded{Outcome: messages.OutcomeCompleted, RoundTrips: 1},
		}, "— 1 round trip\n", "error: index lagging\n"},
		{"context length", []messages.Event{
			messages.ErrorEvent{Message: "too long", Kind: providers.KindContextLength.String()},
			messages.TurnEnded{Outcome: messages.OutcomeCompleted, RoundTrips: 2},
		}, "(the conversation is too long for the model: compacting it, then retrying)\n— 2 round trips\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf, errBuf bytes.Buffer
			r := newRenderer(&buf, &errBuf, term{}, false)
			for _, ev := range tt.events {
				r.event(ev)
			}
			if got := buf.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if got := errBuf.String(); got != tt.wantE {
				t.Errorf("error stream got %q, want %q", got, tt.wantE)
			}
		})
	}
}

func TestRenderer_JSON(t *testing.T) {
	var buf bytes.Buffer
	r := newRenderer(&buf, io.Discard, term{tty: true, color: true}, true)
	for _, ev := range turnEvents() {
		r.event(ev)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(turnEvents()) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(turnEvents()), buf.String())
	}
	for i, l := range lines {
		ev, err := messages.UnmarshalEvent([]byte(l))
		if err != nil || ev.EventType() != turnEvents()[i].EventType() {
			t.Errorf("line %d %q: %v", i, l, err)
		}
	}
	if r.spinning() {
		t.Error("a JSON renderer spins")
	}
}

func TestRenderer_UnfinishedToolsAndColour(t *testing.T) {
	var buf bytes.Buffer
	r := newRenderer(&buf, io.Discard, term{}, false)
	r.event(messages.ToolStarted{CallID: "c1", Name: "bash", Arguments: `{"command":"sleep 9"}`})
	r.event(messages.TurnEnded{Outcome: messages.OutcomeCancelled})
	if got := buf.String(); !strings.HasPrefix(got, "… bash (did not finish)\n") {
		t.Errorf("got %q", got)
	}
	if got := (term{color: true}).red("x"); got != ansiRed+"x"+ansiReset {
		t.Errorf("red = %q", got)
	}
	if got := termFor(&buf, func(string) string { return "" }); got.tty || got.color {
		t.Errorf("a buffer is a terminal: %+v", got)
	}
}

func TestRenderer_StopsAfterWriteError(t *testing.T) {
	w := &failingWriter{}
	r := newRenderer(w, io.Discard, term{}, false)
	r.event(messages.TextDelta{Text: "a"})
	r.event(messages.TextDelta{Text: "b"})
	if w.calls != 1 || r.err == nil {
		t.Errorf("writes after an error: %d calls, err %v", w.calls, r.err)
	}
}

type failingWriter struct{ calls int }

func (w *failingWriter) Write([]byte) (int, error) {
	w.calls++
	return 0, errors.New("closed")
}

func TestSummarize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "(no output)"},
		{"one line\n", "one line"},
		{"a\nb\nc", "3 lines: a b c"},
		{strings.Repeat("x", 100), strings.Repeat("x", summaryWidth-1) + "…"},
	}
	for _, tt := range tests {
		if got := summarize(tt.in); got != tt.want {
			t.Errorf("summarize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{850 * time.Microsecond, "850µs"},
		{12*time.Millisecond + 300*time.Microsecond, "12ms"},
		{1440 * time.Millisecond, "1.4s"},
		{123 * time.Second, "2m03s"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.d); got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestRenderer_PauseForPrompt pauses a terminal view while two calls run,
// as a prompt does: the tool block is erased, the spinners stop, events
// are held, and resume draws the block below the prompt and then renders
// what was held, in order. A call still running when the turn ends is
// shown as unfinished, not left spinning.
func TestRenderer_PauseForPrompt(t *testing.T) {
	var buf bytes.Buffer
	r := newRenderer(&buf, io.Discard, term{tty: true}, false)
	r.event(messages.TextDelta{Text: "Checking"})
	r.event(messages.ToolStarted{CallID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`})
	r.event(messages.ToolStarted{CallID: "c2", Name: "bash", Arguments: `{"command":"ls"}`})

	buf.Reset()
	r.pause()
	if got, want := buf.String(), "\x1b[2A\r\x1b[2K\x1b[J"; got != want {
		t.Errorf("pause wrote %q, want the block erased: %q", got, want)
	}
	buf.Reset()
	buf.WriteString("<prompt>\n")
	r.event(messages.ToolFinished{CallID: "c1", Name: "read_file", Content: "package a", Duration: time.Millisecond})
	if r.spinning() {
		r.tick()
	}
	if got := buf.String(); got != "<prompt>\n" {
		t.Errorf("the paused view wrote %q", got)
	}

	r.resume()
	want := "<prompt>\n" +
		// The block, below the prompt, as it stood.
		"\r\x1b[2K⠋ read_file {\"path\":\"a.go\"}\n\r\x1b[2K⠋ bash {\"command\":\"ls\"}\n" +
		// The held event, redrawn in place.
		"\x1b[2A\r\x1b[2K✓ read_file {\"path\":\"a.go\"} 1ms\n\r\x1b[2K⠋ bash {\"command\":\"ls\"}\n"
	if got := buf.String(); got != want {
		t.Errorf("resume wrote\n%q\nwant\n%q", got, want)
	}

	buf.Reset()
	r.event(messages.TurnEnded{Outcome: messages.OutcomeCancelled, RoundTrips: 1})
	if got := buf.String(); !strings.Contains(got, "\r\x1b[2K… bash {\"command\":\"ls\"} (did not finish)\n") || strings.Contains(got, "⠋") {
		t.Errorf("the unfinished call ends as\n%q", got)
	}
}

// TestClipLine shortens the lines a terminal view redraws in place to the
// terminal's width, styles left whole.
func TestClipLine(t *testing.T) {
	red := term{tty: true, color: true}.red
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven cols", 10, "eleven co…"},
		{red("✗ failed") + " tail", 6, ansiRed + "✗ fai…" + ansiReset},
		{"日本語のテキスト", 7, "日本語…"},
		{"anything", 0, "anything"},
	}
	for _, tt := range tests {
		got := clipLine(tt.s, tt.n)
		if got != tt.want {
			t.Errorf("clipLine(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		if tt.n > 0 && columns(got) > tt.n {
			t.Errorf("clipLine(%q, %d) takes %d columns", tt.s, tt.n, columns(got))
		}
	}
}

// TestRenderer_ClipsToTheTerminal redraws a block whose failed call's line
// is wider than the terminal: each line is clipped, so moving up by the
// number of lines lands on the block's first line.
func TestRenderer_ClipsToTheTerminal(t *testing.T) {
	var buf bytes.Buffer
	r := newRenderer(&buf, io.Discard, term{tty: true, cols: func() int { return 40 }}, false)
	r.event(messages.ToolStarted{CallID: "c1", Name: "bash", Arguments: `{"command":"go test ./... -run TestSomethingLong"}`})
	r.event(messages.ToolFinished{CallID: "c1", Name: "bash", IsError: true, Duration: time.Second,
		Content: "permission denied for tool bash by approver: the user refused"})
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		line = strings.TrimPrefix(line, "\x1b[1A")
		line = strings.TrimPrefix(line, ansiClearLine)
		if n := columns(line); n > 39 {
			t.Errorf("line of %d columns on a 40-column terminal: %q", n, line)
		}
	}
}

// TestRenderer_ToolArgumentsEscaped shows a call whose arguments hold a
// bidirectional override: the tool line shows it escaped, as the approval
// prompt does, rather than letting it turn the line around.
func TestRenderer_ToolArgumentsEscaped(t *testing.T) {
	var buf bytes.Buffer
	r := newRenderer(&buf, io.Discard, term{}, false)
	r.event(messages.ToolStarted{CallID: "c1", Name: "bash", Arguments: "{\"command\":\"echo \u202egnp.exe\"}"})
	r.event(messages.ToolFinished{CallID: "c1", Name: "bash", Duration: time.Millisecond})
	if got, want := buf.String(), `✓ bash {"command":"echo \u202egnp.exe"} 1ms`+"\n"; got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
}

// TestRenderer_ToolProgress shows a running call's last progress report
// after its spinner on a terminal, escaped like its arguments, and drops
// it once the call has finished; off a terminal progress prints nothing.
func TestRenderer_ToolProgress(t *testing.T) {
	events := []messages.Event{
		messages.ToolStarted{CallID: "c1", Name: "mcp__idx__index"},
		messages.ToolProgress{CallID: "c1", Name: "mcp__idx__index", Progress: 2, Total: 5, Message: "file\u202e b.go\n"},
		messages.ToolProgress{CallID: "c1", Name: "mcp__idx__index", Progress: 3.5},
		messages.ToolFinished{CallID: "c1", Name: "mcp__idx__index", Duration: time.Second},
		messages.ToolProgress{CallID: "c1", Name: "mcp__idx__index", Progress: 9},
	}
	tests := []struct {
		name string
		term term
		want string
	}{
		{"plain", term{}, "✓ mcp__idx__index 1s\n"},
		{"terminal", term{tty: true},
			"\r\x1b[2K⠋ mcp__idx__index\n" +
				"\x1b[1A\r\x1b[2K⠋ mcp__idx__index · 2/5 file\\u202e b.go\n" +
				"\x1b[1A\r\x1b[2K⠋ mcp__idx__index · 3.5\n" +
				"\x1b[1A\r\x1b[2K✓ mcp__idx__index 1s\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			r := newRenderer(&buf, io.Discard, tt.term, false)
			for _, ev := range events {
				r.event(ev)
			}
			if got := buf.String(); got != tt.want {
				t.Errorf("rendered\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
