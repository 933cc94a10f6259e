package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// renderer writes the events of one session's turns for a person: the
// assistant's text as it streams, a compact line per tool call (with a
// spinner while it runs, on a terminal, redrawn in place), notes for
// compactions and agent switches, and a status line when the turn
// completes or is cancelled. A turn that fails or stops at a limit gets no
// status line: the command reports it once, on standard error (see
// turnErr). With jsonOut it writes each event as a JSON line instead. It
// remembers the first write error and then writes nothing more. It is not
// safe for concurrent use.
type renderer struct {
	w       io.Writer
	term    term
	jsonOut bool
	// errw receives the errors a turn reports besides the one that ends
	// it.
	errw io.Writer
	// errs are the errors reported during the turn, shown when it ends
	// unless they are the reason it ended.
	errs []string
	// now reads the clock (turn durations).
	now func() time.Time

	midLine bool
	started time.Time
	// tools is the block of tool lines being shown; drawn is how many of
	// its lines are on screen (on a terminal).
	tools []*toolLine
	drawn int
	frame int
	err   error
	// paused is true while a prompt is on screen: events are held, in
	// order, until resume.
	paused bool
	held   []messages.Event
}

// toolLine is one tool call of the block.
type toolLine struct {
	id, name, args string
	done, failed   bool
	// abandoned is true for a call whose block ended before it finished
	// (a call cancelled while it waited for approval).
	abandoned bool
	dur       time.Duration
	content   string
	// progress is the call's last progress report, shown after the
	// spinner while it runs ("" before the first).
	progress string
}

// newRenderer returns a renderer writing to w, and to errw the errors a
// turn reports besides the one that ends it.
func newRenderer(w, errw io.Writer, t term, jsonOut bool) *renderer {
	return &renderer{w: w, errw: errw, term: t, jsonOut: jsonOut, now: time.Now}
}

// spinning reports whether a tool call is running on a terminal, so that
// tick has something to animate.
func (r *renderer) spinning() bool {
	if !r.term.tty || r.jsonOut || r.paused {
		return false
	}
	for _, t := range r.tools {
		if !t.done {
			return true
		}
	}
	return false
}

// tick advances the spinners.
func (r *renderer) tick() {
	r.frame++
	r.redraw()
}

// pause stops the live view so that a prompt can be written below it:
// the streamed text's line is ended, the tool block is erased from the
// terminal (resume draws it again, whole, below the prompt), and events
// are held until resume.
func (r *renderer) pause() {
	if r.paused || r.jsonOut {
		return
	}
	r.endText()
	if r.term.tty && r.drawn > 0 {
		r.write(fmt.Sprintf("\x1b[%dA%s\x1b[J", r.drawn, ansiClearLine))
		r.drawn = 0
	}
	r.paused = true
}

// resume restarts the live view after pause: the tool block is drawn
// again and the held events are rendered.
func (r *renderer) resume() {
	if !r.paused {
		return
	}
	r.paused = false
	r.redraw()
	held := r.held
	r.held = nil
	for _, ev := range held {
		r.event(ev)
	}
}

// event renders ev, or holds it while the view is paused.
func (r *renderer) event(ev messages.Event) {
	if r.paused {
		r.held = append(r.held, ev)
		return
	}
	if r.jsonOut {
		b, err := messages.MarshalEvent(ev)
		if err != nil {
			r.err = err
			return
		}
		r.write(string(b) + "\n")
		return
	}
	switch e := ev.(type) {
	case messages.TurnStarted:
		r.started = r.now()
	case messages.TextDelta:
		r.endBlock()
		s := printable(e.Text)
		if s != "" {
			r.write(s)
			r.midLine = !strings.HasSuffix(s, "\n")
		}
	case messages.ToolStarted:
		r.endText()
		r.tools = append(r.tools, &toolLine{id: e.CallID, name: printable(e.Name), args: compactArgs(e.Arguments)})
		r.redraw()
	case messages.ToolProgress:
		// Only a terminal shows progress, in place; off a terminal the
		// call's one line comes when it finishes.
		if t := r.tool(e.CallID, e.Name); !t.done && r.term.tty {
			t.progress = progressText(e)
			r.redraw()
		}
	case messages.ToolFinished:
		t := r.tool(e.CallID, e.Name)
		t.done, t.failed, t.dur, t.content = true, e.IsError, e.Duration, e.Content
		if r.term.tty {
			r.redraw()
		} else {
			r.write(r.toolText(t) + "\n")
		}
	case messages.ErrorEvent:
		if e.Kind == providers.KindContextLength.String() {
			r.note(r.term.dim("(the conversation is too long for the model: compacting it, then retrying)"))
			break
		}
		r.errs = append(r.errs, e.Message)
	case messages.ContextCompacted:
		r.note(r.term.dim(fmt.Sprintf("(context compacted, %s: %d → %d tokens)", e.Kind, e.TokensBefore, e.TokensAfter)))
	case messages.AgentChanged:
		r.note(r.term.dim(fmt.Sprintf("(agent %s → %s)", printable(e.From), printable(e.To))))
	case messages.ApprovalPending:
		// The command's approver asks on the terminal or refuses (see
		// approvalPrompt): the event has nothing to add.
	case messages.SubAgentStarted:
		r.note(r.term.dim(fmt.Sprintf("(sub-agent %s started)", printable(e.Child))))
	case messages.TurnEnded:
		r.endBlock()
		r.endText()
		for _, msg := range r.errs {
			if msg != e.Reason && r.errw != nil {
				fmt.Fprintln(r.errw, "error: "+oneLine(withoutPackages(msg), 200))
			}
		}
		r.errs = nil
		if summary := r.turnSummary(e); summary != "" {
			r.note(summary)
		}
	}
}

// tool returns the line of call id, adding one when the start was not seen.
func (r *renderer) tool(id, name string) *toolLine {
	for _, t := range r.tools {
		if t.id == id {
			return t
		}
	}
	t := &toolLine{id: id, name: printable(name)}
	r.tools = append(r.tools, t)
	return t
}

// toolText is the line of one tool call: "✓ read_file {"path":"go.mod"} 3ms",
// "✗ ... 3ms · the error", or a spinner while it runs.
func (r *renderer) toolText(t *toolLine) string {
	head := t.name
	if t.args != "" && t.args != "{}" {
		head += " " + r.term.dim(t.args)
	}
	switch {
	case t.abandoned:
		return r.term.dim("…") + " " + head + " " + r.term.dim("(did not finish)")
	case !t.done && t.progress != "":
		return r.term.cyan(spinnerFrames[r.frame%len(spinnerFrames)]) + " " + head + " " + r.term.dim("· "+t.progress)
	case !t.done:
		return r.term.cyan(spinnerFrames[r.frame%len(spinnerFrames)]) + " " + head
	case t.failed:
		return r.term.red(markFail) + " " + head + " " + r.term.dim(formatDuration(t.dur)) + " · " + r.term.red(oneLine(t.content, summaryWidth))
	default:
		return r.term.green(markOK) + " " + head + " " + r.term.dim(formatDuration(t.dur))
	}
}

// progressText is the suffix of a running tool's line: "2/5 indexing"
// with a known total, "2 indexing" without, the message on one line with
// what a terminal would not show as written escaped (see safeText).
func progressText(e messages.ToolProgress) string {
	s := progressNumber(e.Progress)
	if e.Total > 0 {
		s += "/" + progressNumber(e.Total)
	}
	if msg := truncate(strings.Join(strings.Fields(safeText(e.Message)), " "), summaryWidth); msg != "" {
		s += " " + msg
	}
	return s
}

// progressNumber writes x as it was sent ("3", "3.5"), and in exponent
// form when it is too large or too small for that to stay short.
func progressNumber(x float64) string {
	if a := math.Abs(x); a >= 1e15 || a != 0 && a < 1e-6 {
		return strconv.FormatFloat(x, 'g', 6, 64)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// redraw draws the tool block again, in place, on a terminal.
func (r *renderer) redraw() {
	if !r.term.tty || len(r.tools) == 0 {
		return
	}
	var b strings.Builder
	if r.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", r.drawn)
	}
	cols := 0
	if r.term.cols != nil {
		cols = r.term.cols()
	}
	for _, t := range r.tools {
		b.WriteString(ansiClearLine + clipLine(r.toolText(t), cols-1) + "\n")
	}
	r.drawn = len(r.tools)
	r.write(b.String())
}

// endBlock closes the tool block: the next tools start a new one. Calls
// that never finished are shown as such: off a terminal on a line of their
// own, on a terminal in place of their spinner.
func (r *renderer) endBlock() {
	unfinished := false
	for _, t := range r.tools {
		if !t.done {
			unfinished, t.abandoned = true, true
			if !r.term.tty {
				r.write(fmt.Sprintf("%s %s %s\n", r.term.dim("…"), t.name, r.term.dim("(did not finish)")))
			}
		}
	}
	if unfinished {
		r.redraw()
	}
	r.tools, r.drawn = nil, 0
}

// endText ends the streamed text's line, if one is open.
func (r *renderer) endText() {
	if r.midLine {
		r.write("\n")
		r.midLine = false
	}
}

// note writes a line of its own.
func (r *renderer) note(s string) {
	r.endText()
	r.write(s + "\n")
}

// turnSummary is the status line of an ended turn: empty for a turn that
// failed or stopped at a limit, which the command reports.
func (r *renderer) turnSummary(e messages.TurnEnded) string {
	if e.Outcome != messages.OutcomeCompleted && e.Outcome != messages.OutcomeCancelled {
		return ""
	}
	parts := []string{fmt.Sprintf("%d round trip%s", e.RoundTrips, plural(e.RoundTrips))}
	if e.Usage.TotalTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", e.Usage.TotalTokens))
	}
	if e.Cost > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", e.Cost))
	}
	if !r.started.IsZero() {
		parts = append(parts, formatDuration(r.now().Sub(r.started)))
	}
	details := strings.Join(parts, " · ")
	if e.Outcome == messages.OutcomeCancelled {
		return r.term.red(markFail+" cancelled") + r.term.dim(" · "+details)
	}
	return r.term.dim("— " + details)
}

// clipLine shortens s to n columns, marking a cut with "…", so that a
// line redrawn in place never wraps (a wrapped line would throw off the
// count of lines to move up). The ANSI styles this package writes take no
// columns and are kept; a wide character takes two. n < 1 leaves s as it
// is.
func clipLine(s string, n int) string {
	if n < 1 || columns(s) <= n {
		return s
	}
	var b strings.Builder
	cols, styled := 0, false
	for i := 0; i < len(s); {
		if esc := ansiSequence(s[i:]); esc != "" {
			b.WriteString(esc)
			styled = true
			i += len(esc)
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if cols+runeColumns(c) > n-1 {
			break
		}
		b.WriteRune(c)
		cols += runeColumns(c)
		i += size
	}
	b.WriteString("…")
	if styled {
		b.WriteString(ansiReset)
	}
	return b.String()
}

// columns is the width of s on a terminal, its ANSI styles left out.
func columns(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if esc := ansiSequence(s[i:]); esc != "" {
			i += len(esc)
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		n += runeColumns(c)
		i += size
	}
	return n
}

// ansiSequence returns the style sequence (ESC [ ... m) s starts with, or
// "".
func ansiSequence(s string) string {
	if !strings.HasPrefix(s, "\x1b[") {
		return ""
	}
	if j := strings.IndexByte(s, 'm'); j > 0 {
		return s[:j+1]
	}
	return ""
}

// runeColumns is the width of c on a terminal: two for a wide character.
func runeColumns(c rune) int {
	if k := width.LookupRune(c).Kind(); k == width.EastAsianWide || k == width.EastAsianFullwidth {
		return 2
	}
	return 1
}

func (r *renderer) write(s string) {
	if r.err != nil {
		return
	}
	_, r.err = io.WriteString(r.w, s)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
