package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
)

// maxLiveLines is the most sessions the terminal view shows a line each
// for; beyond it, one line sums them up.
const maxLiveLines = 20

// demoSession is what the demo view knows of one session.
type demoSession struct {
	id                                   string
	turns, roundTrips, toolCalls, errors int
	tokens                               int64
	cost                                 float64
	start, end                           time.Time
	outcome                              messages.TurnOutcome
	reason, answer                       string
	// running are the tool calls in progress, by call id.
	running map[string]string
	done    bool
}

// demoView runs the demo's sessions and shows their progress: a line per
// session redrawn in place on a terminal, plain lines otherwise, or JSON
// lines; then a summary table. It is used by one goroutine.
type demoView struct {
	w io.Writer
	// workspace is the directory the sessions work in, named by the JSON
	// summary line.
	workspace string
	term      term
	jsonOut   bool
	sessions  []*demoSession
	now       func() time.Time
	started   time.Time
	drawn     int
	frame     int
	err       error
}

func newDemoView(w io.Writer, t term, jsonOut bool, n int) *demoView {
	v := &demoView{w: w, term: t, jsonOut: jsonOut, now: time.Now}
	for i := range n {
		v.sessions = append(v.sessions, &demoSession{id: fmt.Sprintf("demo-%d", i+1), running: map[string]string{}})
	}
	return v
}

// play runs turns turns of prompt in every session at once and shows them.
// An interrupt (ctx done) cancels the running turns and starts no more;
// play then returns ctx's cause. It returns an error when a session did not
// complete.
func (v *demoView) play(ctx context.Context, rt *actors.Runtime, prompt string, turns int) error {
	handles := make([]*actors.Session, len(v.sessions))
	for i, s := range v.sessions {
		h, err := rt.Open(ctx, s.id)
		if err != nil {
			return err
		}
		handles[i] = h
	}
	events := make(chan streamEvent, 256)
	done := make(chan int, len(handles))
	stop := make(chan struct{})
	v.started = v.now()
	for i, h := range handles {
		go runDemoSession(h, i, messages.UserText(prompt), turns, events, done, stop)
	}
	ticker := time.NewTicker(tickInterval)
	defer ticker.Stop()
	ctxDone := ctx.Done()
	interrupted := false
	for remaining := len(handles); remaining > 0; {
		select {
		case se := <-events:
			v.event(se)
		case <-done:
			remaining--
		case <-ticker.C:
			v.frame++
			v.redraw()
		case <-ctxDone:
			ctxDone, interrupted = nil, true
			close(stop)
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			for _, h := range handles {
				_, _ = h.Cancel(cctx)
			}
			cancel()
		}
	}
	for len(events) > 0 {
		v.event(<-events)
	}
	v.redraw()
	v.summary()
	if interrupted {
		return context.Cause(ctx)
	}
	failed := 0
	for _, s := range v.sessions {
		if s.outcome != messages.OutcomeCompleted {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d sessions did not complete", failed, len(v.sessions))
	}
	return v.err
}

// runDemoSession runs the turns of one session, sending its events, until
// a turn does not complete or stop is closed; then it reports on done.
func runDemoSession(h *actors.Session, i int, msg messages.Message, turns int, events chan<- streamEvent, done chan<- int, stop <-chan struct{}) {
	defer func() { done <- i }()
	for range turns {
		select {
		case <-stop:
			return
		default:
		}
		completed := false
		for ev, err := range h.Stream(context.Background(), msg) {
			events <- streamEvent{session: i, ev: ev, err: err}
			if e, ok := ev.(messages.TurnEnded); ok {
				completed = e.Outcome == messages.OutcomeCompleted
			}
			if err != nil {
				break
			}
		}
		if !completed {
			return
		}
	}
}

// event records and shows one event.
func (v *demoView) event(se streamEvent) {
	s := v.sessions[se.session]
	if se.err != nil {
		s.outcome, s.reason, s.end = messages.OutcomeFailed, se.err.Error(), v.now()
		v.line(s, v.term.red(markFail+" "+oneLine(se.err.Error(), 100)))
		return
	}
	if v.jsonOut {
		b, err := messages.MarshalEvent(se.ev)
		if err != nil {
			v.err = err
			return
		}
		v.write(string(b) + "\n")
	}
	switch e := se.ev.(type) {
	case messages.TurnStarted:
		if s.start.IsZero() {
			s.start = v.now()
		}
	case messages.ToolStarted:
		s.running[e.CallID] = e.Name
		v.toolLine(s, e.CallID, compactArgs(e.Arguments))
	case messages.ToolFinished:
		delete(s.running, e.CallID)
		s.toolCalls++
		mark := v.term.green(markOK)
		tail := ""
		if e.IsError {
			s.errors++
			mark = v.term.red(markFail)
			tail = " · " + v.term.red(oneLine(e.Content, 60))
		}
		if !v.term.tty {
			v.line(s, fmt.Sprintf("%s %s %s%s", mark, printable(e.Name), v.term.dim(formatDuration(e.Duration)), tail))
		}
	case messages.TurnEnded:
		s.turns++
		s.roundTrips += e.RoundTrips
		s.tokens += e.Usage.TotalTokens
		s.cost += e.Cost
		s.outcome, s.reason, s.answer, s.end = e.Outcome, e.Reason, e.Text, v.now()
		if !v.term.tty {
			v.line(s, v.status(s))
		}
	}
}

// toolLine notes a started tool call off a terminal.
func (v *demoView) toolLine(s *demoSession, callID, args string) {
	if v.term.tty {
		return
	}
	v.line(s, fmt.Sprintf("%s %s %s", v.term.cyan("→"), printable(s.running[callID]), v.term.dim(args)))
}

// line writes a plain line about session s (not on a terminal, not JSON).
func (v *demoView) line(s *demoSession, text string) {
	if v.jsonOut || v.term.tty {
		return
	}
	v.write(fmt.Sprintf("%-8s %s\n", s.id, text))
}

// status describes where session s stands.
func (v *demoView) status(s *demoSession) string {
	end := s.end
	if len(s.running) > 0 || end.IsZero() || end.Before(s.start) {
		end = v.now()
	}
	dur := ""
	if !s.start.IsZero() {
		dur = " · " + formatDuration(end.Sub(s.start))
	}
	stats := fmt.Sprintf("%d round trip%s · %d tool call%s", s.roundTrips, plural(s.roundTrips), s.toolCalls, plural(s.toolCalls))
	if s.tokens > 0 {
		stats += fmt.Sprintf(" · %d tokens", s.tokens)
	}
	switch {
	case len(s.running) > 0:
		names := map[string]int{}
		for _, n := range s.running {
			names[n]++
		}
		var parts []string
		for n, c := range names {
			if c > 1 {
				n += fmt.Sprintf(" ×%d", c)
			}
			parts = append(parts, printable(n))
		}
		return v.term.cyan(spinnerFrames[v.frame%len(spinnerFrames)]) + " " + strings.Join(slices.Sorted(slices.Values(parts)), ", ") + v.term.dim(" · "+stats+dur)
	case s.outcome == "":
		if s.start.IsZero() {
			return v.term.dim("waiting")
		}
		return v.term.cyan(spinnerFrames[v.frame%len(spinnerFrames)]) + " thinking" + v.term.dim(" · "+stats+dur)
	case s.outcome == messages.OutcomeCompleted:
		return v.term.green(markOK+" completed") + v.term.dim(" · "+stats+dur)
	default:
		return v.term.red(fmt.Sprintf("%s %s: %s", markFail, s.outcome, oneLine(s.reason, 60))) + v.term.dim(" · "+stats+dur)
	}
}

// redraw draws the live view again, in place, on a terminal.
func (v *demoView) redraw() {
	if !v.term.tty || v.jsonOut {
		return
	}
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.drawn)
	}
	if len(v.sessions) <= maxLiveLines {
		for _, s := range v.sessions {
			fmt.Fprintf(&b, "%s%-8s %s\n", ansiClearLine, s.id, v.status(s))
		}
		v.drawn = len(v.sessions)
	} else {
		running, completed, failed, tools := 0, 0, 0, 0
		for _, s := range v.sessions {
			tools += s.toolCalls
			switch {
			case s.outcome == messages.OutcomeCompleted:
				completed++
			case s.outcome != "":
				failed++
			default:
				running++
			}
		}
		fmt.Fprintf(&b, "%s%s running %d · completed %d · failed %d · %d tool calls · %s\n", ansiClearLine,
			v.term.cyan(spinnerFrames[v.frame%len(spinnerFrames)]), running, completed, failed, tools, formatDuration(v.now().Sub(v.started)))
		v.drawn = 1
	}
	v.write(b.String())
}

// demoSummary is the JSON form of a session's line in the summary.
type demoSummary struct {
	Session    string               `json:"session"`
	Outcome    messages.TurnOutcome `json:"outcome"`
	Reason     string               `json:"reason,omitempty"`
	Turns      int                  `json:"turns"`
	RoundTrips int                  `json:"round_trips"`
	ToolCalls  int                  `json:"tool_calls"`
	ToolErrors int                  `json:"tool_errors"`
	Tokens     int64                `json:"tokens"`
	Cost       float64              `json:"cost,omitempty"`
	Duration   time.Duration        `json:"duration_ns"`
}

// summary writes the table of sessions (or a JSON summary line).
func (v *demoView) summary() {
	rows := make([]demoSummary, len(v.sessions))
	var total demoSummary
	completed := 0
	for i, s := range v.sessions {
		var dur time.Duration
		if !s.start.IsZero() && !s.end.IsZero() {
			dur = s.end.Sub(s.start)
		}
		rows[i] = demoSummary{Session: s.id, Outcome: s.outcome, Reason: s.reason, Turns: s.turns, RoundTrips: s.roundTrips,
			ToolCalls: s.toolCalls, ToolErrors: s.errors, Tokens: s.tokens, Cost: s.cost, Duration: dur}
		total.ToolCalls += s.toolCalls
		total.Tokens += s.tokens
		if s.outcome == messages.OutcomeCompleted {
			completed++
		}
	}
	wall := v.now().Sub(v.started)
	if v.jsonOut {
		b, err := json.Marshal(struct {
			Type string `json:"type"`
			Data any    `json:"data"`
		}{"summary", map[string]any{"sessions": rows, "wall_ns": wall, "workspace": v.workspace}})
		if err != nil {
			v.err = err
			return
		}
		v.write(string(b) + "\n")
		return
	}
	var b strings.Builder
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SESSION\tOUTCOME\tTURNS\tROUND TRIPS\tTOOL CALLS\tERRORS\tTOKENS\tDURATION\t")
	for _, r := range rows {
		outcome := string(r.Outcome)
		if outcome == "" {
			outcome = "unfinished"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", r.Session, outcome, r.Turns, r.RoundTrips, r.ToolCalls, r.ToolErrors, r.Tokens, formatDuration(r.Duration))
	}
	_ = tw.Flush() // writes to a strings.Builder
	fmt.Fprintf(&b, "\n%d of %d sessions completed · %d tool calls · %d tokens · %s wall time\n",
		completed, len(v.sessions), total.ToolCalls, total.Tokens, formatDuration(wall))
	if len(v.sessions) > 0 && v.sessions[0].answer != "" {
		fmt.Fprintf(&b, "%s answered: %s\n", v.sessions[0].id, oneLine(v.sessions[0].answer, 200))
	}
	v.write(b.String())
}

func (v *demoView) write(s string) {
	if v.err != nil {
		return
	}
	_, v.err = io.WriteString(v.w, s)
}
