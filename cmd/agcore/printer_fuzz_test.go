package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// FuzzPrinter prints arbitrary model text, tool arguments and tool output,
// and checks that each tool line stays one line of bounded width and that no
// control character (a terminal escape) gets through.
func FuzzPrinter(f *testing.F) {
	f.Add("Hello", `{"path":"."}`, "a\nb\n")
	f.Add("", "not json", "")
	f.Fuzz(func(t *testing.T, text, args, output string) {
		var buf bytes.Buffer
		p := &printer{w: &buf}
		p.text(text)
		p.toolCall(messages.ToolCall{Name: "t", Arguments: args})
		p.toolResult(messages.ToolCall{Name: "t"}, toolsys.Result{Content: output})
		if p.err != nil {
			t.Fatal(p.err)
		}
		out := buf.String()
		for _, r := range out {
			if r != '\n' && r != '\t' && unicode.IsControl(r) {
				t.Fatalf("output holds control character %U: %q", r, out)
			}
		}
		text = printable(text)
		rest := strings.TrimPrefix(out, text)
		if text != "" && !strings.HasSuffix(text, "\n") {
			rest = strings.TrimPrefix(rest, "\n")
		}
		lines := strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("tool lines %q, want 2 lines", rest)
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > argsWidth+16 {
				t.Errorf("line of %d runes: %q", n, l)
			}
		}
	})
}
