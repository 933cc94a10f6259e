package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// chaosPlainEvery is how often the progress is printed as a plain line
// when the output is not a terminal.
const chaosPlainEvery = 5 * time.Second

// chaosView shows a run: a progress line redrawn in place on a terminal
// (a plain line every few seconds otherwise, nothing with --json), then
// the report. It is used by one goroutine.
type chaosView struct {
	w       io.Writer
	term    term
	o       *chaosOptions
	tally   *chaosTally
	now     func() time.Time
	started time.Time
	frame   int
	drawn   bool
	err     error
}

func newChaosView(w io.Writer, t term, o *chaosOptions, tally *chaosTally) *chaosView {
	return &chaosView{w: w, term: t, o: o, tally: tally, now: time.Now}
}

// header names the run.
func (v *chaosView) header(dataDir string) {
	if v.o.jsonOut {
		return
	}
	kills := "no kills"
	if v.o.killEvery != "" {
		kills = "SIGKILL every " + v.o.killEvery
	}
	workload := "built-in workload"
	if v.o.model != "" {
		workload = "model " + v.o.model
	}
	v.write(fmt.Sprintf("agcore chaos · %d sessions × %d turn%s · %s · %s · seed %d\n",
		v.o.sessions, v.o.turns, plural(v.o.turns), workload, kills, v.o.seed))
	var rates []string
	for _, r := range []struct {
		name string
		v    float64
	}{{"model failures", v.o.failRate}, {"malformed", v.o.malformedRate}, {"truncated", v.o.truncateRate},
		{"slow tokens", v.o.slowTokenRate}, {"panics", v.o.panicRate}, {"hangs", v.o.hangRate},
		{"tool errors", v.o.toolErrorRate}, {"slow tools", v.o.slowToolRate}, {"refused writes", v.o.appendFailRate}} {
		if r.v > 0 {
			rates = append(rates, fmt.Sprintf("%s %g%%", r.name, r.v*100))
		}
	}
	if len(rates) == 0 {
		rates = []string{"none (set --fail-rate, --panic-rate, --hang-rate, ...)"}
	}
	v.write(fmt.Sprintf("faults: %s\ndata: %s\n\n", strings.Join(rates, " · "), dataDir))
}

// run runs work in its own goroutine and shows the progress until it
// returns.
func (v *chaosView) run(ctx context.Context, work func() error) error {
	v.started = v.now()
	done := make(chan error, 1)
	go func() { done <- work() }()
	every := tickInterval
	if !v.term.tty {
		every = chaosPlainEvery
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case err := <-done:
			v.progress(true)
			return err
		case <-ticker.C:
			v.frame++
			v.progress(false)
		}
	}
}

// progress draws the progress line; final ends it.
func (v *chaosView) progress(final bool) {
	if v.o.jsonOut || (!v.term.tty && final) {
		return
	}
	p := v.tally.snapshot()
	total := v.o.sessions * v.o.turns
	mark := "·"
	if v.term.tty {
		mark = v.term.cyan(spinnerFrames[v.frame%len(spinnerFrames)])
	}
	if final {
		mark = v.term.green(markOK)
	}
	line := fmt.Sprintf("%s turns %d/%d ended (%d did not complete) · %d faults", mark, p.ended, total, p.failed, p.faults)
	if v.o.killEvery != "" {
		line += fmt.Sprintf(" · %d kills · %d restarts", p.kills, p.restarts)
	}
	line += " · " + formatDuration(v.now().Sub(v.started))
	if v.term.tty {
		v.write(ansiClearLine + line)
		if final {
			v.write("\n\n")
		}
		return
	}
	v.write(line + "\n")
}

// report prints the report, as JSON with --json.
func (v *chaosView) report(rep *chaosReport) error {
	if v.o.jsonOut {
		enc := json.NewEncoder(v.w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printChaosReport(v.w, v.term, rep)
	return v.err
}

func (v *chaosView) write(s string) {
	if v.err != nil {
		return
	}
	_, v.err = io.WriteString(v.w, s)
}
