package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// Widths, in runes, of what the printer shows of arguments and results.
const (
	argsWidth    = 96
	summaryWidth = 72
)

// printer writes a conversation for a person to read: streamed text as it
// arrives, one line per tool call, one line per result. Model output is
// untrusted, so control characters other than newline and tab (terminal
// escape sequences among them) are dropped. It remembers the first write
// error and then writes nothing more.
type printer struct {
	w io.Writer
	// midLine is true when streamed text has been written without a final
	// newline.
	midLine bool
	err     error
}

// text writes a piece of streamed assistant text.
func (p *printer) text(s string) {
	s = printable(s)
	if s == "" {
		return
	}
	p.write(s)
	p.midLine = !strings.HasSuffix(s, "\n")
}

// endText ends the streamed text's line, if one is open.
func (p *printer) endText() {
	if p.midLine {
		p.write("\n")
		p.midLine = false
	}
}

// toolCall writes "→ name {args}".
func (p *printer) toolCall(c messages.ToolCall) {
	p.endText()
	p.write(fmt.Sprintf("→ %s %s\n", printable(c.Name), compactArgs(c.Arguments)))
}

// toolResult writes "← name: summary" for a result, or "← name failed:
// message" for an error result.
func (p *printer) toolResult(c messages.ToolCall, r toolsys.Result) {
	p.endText()
	verb := ""
	if r.IsError {
		verb = " failed"
	}
	p.write(fmt.Sprintf("← %s%s: %s\n", printable(c.Name), verb, summarize(r.Content)))
}

// note writes a line of its own.
func (p *printer) note(format string, args ...any) {
	p.endText()
	p.write(fmt.Sprintf(format, args...) + "\n")
}

func (p *printer) write(s string) {
	if p.err != nil {
		return
	}
	_, p.err = io.WriteString(p.w, s)
}

// compactArgs renders tool arguments on one line, shortened to argsWidth.
func compactArgs(args string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(args)); err == nil {
		args = b.String()
	}
	return truncate(strings.Join(strings.Fields(printable(args)), " "), argsWidth)
}

// summarize describes a tool's output in one line: its size and the start of
// its text.
func summarize(content string) string {
	content = strings.TrimRight(content, "\n")
	if content == "" {
		return "(no output)"
	}
	lines := strings.Count(content, "\n") + 1
	head := truncate(strings.Join(strings.Fields(printable(content)), " "), summaryWidth)
	if lines == 1 {
		return head
	}
	return fmt.Sprintf("%d lines: %s", lines, head)
}

// truncate shortens s to at most n runes, marking a cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// printable drops the control characters of s other than newline and tab,
// and replaces invalid UTF-8.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
