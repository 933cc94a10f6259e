package main

import (
	"io"

	"github.com/mattn/go-isatty"

	"github.com/agcore/agcore/internal/logging"
)

// term describes where output goes: a terminal (live, redrawn views) or
// not (plain lines), and whether to use colours.
type term struct {
	// tty is true when the output is a terminal.
	tty bool
	// color is true on a terminal unless NO_COLOR is set.
	color bool
	// cols returns the terminal's width in columns, read at each call so
	// that a resized window is followed. Nil, or a result of zero, means
	// the width is unknown: lines drawn in place are then not clipped.
	cols func() int
}

// termFor describes w, honouring NO_COLOR (https://no-color.org).
func termFor(w io.Writer, getenv func(string) string) term {
	tty := logging.IsTerminal(w)
	t := term{tty: tty, color: tty && getenv("NO_COLOR") == ""}
	if f, ok := w.(interface{ Fd() uintptr }); ok && tty {
		t.cols = func() int { return terminalWidth(f.Fd()) }
	}
	return t
}

// isTerminal reports whether stream (standard input or output) is a
// terminal, through the app's terminal seam when it has one.
func (a *app) isTerminal(stream any) bool {
	if a.terminal != nil {
		return a.terminal(stream)
	}
	f, ok := stream.(interface{ Fd() uintptr })
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// ANSI styles.
const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiCyan  = "\x1b[36m"
	// ansiClearLine returns to the start of the line and clears it.
	ansiClearLine = "\r\x1b[2K"
)

func (t term) paint(code, s string) string {
	if !t.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

func (t term) dim(s string) string   { return t.paint(ansiDim, s) }
func (t term) bold(s string) string  { return t.paint(ansiBold, s) }
func (t term) red(s string) string   { return t.paint(ansiRed, s) }
func (t term) green(s string) string { return t.paint(ansiGreen, s) }
func (t term) cyan(s string) string  { return t.paint(ansiCyan, s) }

// spinnerFrames animate a running tool call on a terminal.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Marks of a finished tool call or turn.
const (
	markOK   = "✓"
	markFail = "✗"
)
