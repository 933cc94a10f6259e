package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agcore/agcore/messages"
)

// FuzzPrinter renders a turn whose text, tool arguments and tool output
// are arbitrary (model and tool output are untrusted), off a terminal, and
// checks that each tool line stays one line of bounded width and that no
// control character (a terminal escape) gets through.
func FuzzPrinter(f *testing.F) {
	f.Add("Hello", `{"path":"."}`, "a\nb\n")
	f.Add("", "not json", "")
	f.Fuzz(func(t *testing.T, text, args, output string) {
		var buf bytes.Buffer
		r := newRenderer(&buf, io.Discard, term{}, false)
		r.event(messages.TextDelta{Text: text})
		r.event(messages.ToolStarted{CallID: "c1", Name: "t", Arguments: args})
		r.event(messages.ToolFinished{CallID: "c1", Name: "t", IsError: true, Content: output, Duration: time.Millisecond})
		if r.err != nil {
			t.Fatal(r.err)
		}
		out := buf.String()
		for _, c := range out {
			if c != '\n' && c != '\t' && unicode.IsControl(c) {
				t.Fatalf("output holds control character %U: %q", c, out)
			}
		}
		text = printable(text)
		rest := strings.TrimPrefix(out, text)
		if text != "" && !strings.HasSuffix(text, "\n") {
			rest = strings.TrimPrefix(rest, "\n")
		}
		lines := strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
		if len(lines) != 1 {
			t.Fatalf("tool lines %q, want 1 line", rest)
		}
		if n := utf8.RuneCountInString(lines[0]); n > argsWidth+summaryWidth+24 {
			t.Errorf("line of %d runes: %q", n, lines[0])
		}
	})
}
