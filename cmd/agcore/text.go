package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Widths, in runes, of what the terminal shows of arguments and results.
const (
	argsWidth    = 72
	summaryWidth = 72
)

// compactArgs renders tool arguments on one line, shortened to argsWidth,
// with the characters a terminal would not show as written escaped (see
// safeText): a bidirectional override in a command does not turn the
// line around.
func compactArgs(args string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(args)); err == nil {
		args = b.String()
	}
	return truncate(strings.Join(strings.Fields(safeText(args)), " "), argsWidth)
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
// and replaces invalid UTF-8. Model output, tool output and journal
// contents are untrusted: this keeps terminal escape sequences out.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// oneLine is printable(s) on a single line, shortened to n runes.
func oneLine(s string, n int) string {
	return truncate(strings.Join(strings.Fields(printable(s)), " "), n)
}

// formatDuration renders d compactly: "850µs", "12ms", "1.4s", "2m03s".
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
