package main

import (
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agcore/agcore/messages"
)

// FuzzProgressText renders a tool progress report whose numbers and
// message are arbitrary (an MCP server sends them) and checks that the
// suffix of the tool line stays on one line of bounded width, with no
// control or format character (a terminal escape, a bidirectional
// override) passed through.
func FuzzProgressText(f *testing.F) {
	f.Add(2.0, 5.0, "indexing b.go")
	f.Add(0.5, 0.0, "")
	f.Add(math.Inf(1), math.NaN(), "\x1b[2J\u202eevil\nline")
	f.Fuzz(func(t *testing.T, progress, total float64, msg string) {
		s := progressText(messages.ToolProgress{Progress: progress, Total: total, Message: msg})
		for _, c := range s {
			if unicode.IsControl(c) || unicode.In(c, unicode.Cf, unicode.Zl, unicode.Zp) {
				t.Fatalf("progress text holds %U: %q", c, s)
			}
		}
		// Two numbers of at most 25 runes each, a slash, a space and the
		// message.
		if n := utf8.RuneCountInString(s); n > 2*25+2+summaryWidth {
			t.Errorf("progress text of %d runes: %q", n, s)
		}
		if strings.Contains(s, "\n") {
			t.Errorf("progress text on several lines: %q", s)
		}
	})
}
