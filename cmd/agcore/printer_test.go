package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

func TestPrinter(t *testing.T) {
	var buf bytes.Buffer
	p := &printer{w: &buf}
	p.text("Let me ")
	p.text("look.")
	p.toolCall(messages.ToolCall{Name: "read_file", Arguments: "{\n  \"path\": \"a.go\"\n}"})
	p.toolResult(messages.ToolCall{Name: "read_file"}, toolsys.Result{Content: "line one\nline two\n"})
	p.toolResult(messages.ToolCall{Name: "read_file"}, toolsys.Result{Content: "no such file", IsError: true})
	p.text("Done.")
	p.endText()
	p.endText()
	want := "Let me look.\n" +
		"→ read_file {\"path\":\"a.go\"}\n" +
		"← read_file: 2 lines: line one line two\n" +
		"← read_file failed: no such file\n" +
		"Done.\n"
	if got := buf.String(); got != want {
		t.Errorf("printed\n%q\nwant\n%q", got, want)
	}
}

func TestPrinter_StopsAfterWriteError(t *testing.T) {
	w := &failingWriter{}
	p := &printer{w: w}
	p.text("a")
	p.text("b")
	if w.calls != 1 || p.err == nil {
		t.Errorf("writes after an error: %d calls, err %v", w.calls, p.err)
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
		{"\n", "(no output)"},
		{"wrote 12 bytes", "wrote 12 bytes"},
		{"a\nb\n", "2 lines: a b"},
		{strings.Repeat("é", 100), strings.Repeat("é", summaryWidth-1) + "…"},
		{"\x1b[31mred\x1b[0m\r\n\xff", "2 lines: [31mred[0m \uFFFD"},
	}
	for _, tt := range tests {
		if got := summarize(tt.in); got != tt.want {
			t.Errorf("summarize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCompactArgs(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{ "path" : "." }`, `{"path":"."}`},
		{`not json {`, `not json {`},
		{`{"content":"` + strings.Repeat("x", 200) + `"}`, `{"content":"` + strings.Repeat("x", argsWidth-13) + "…"},
	}
	for _, tt := range tests {
		if got := compactArgs(tt.in); got != tt.want {
			t.Errorf("compactArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
