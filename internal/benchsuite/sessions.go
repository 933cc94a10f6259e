package benchsuite

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// SessionsConfig sizes the sessions workload. Zero fields take the
// defaults of the full run (quick-run defaults in parentheses).
type SessionsConfig struct {
	// Counts are the numbers of concurrent sessions, each measured on a
	// runtime of its own. Empty means 1,000 and 10,000.
	Counts []int
	// TurnsPerSession is the number of turns each session runs. Zero means
	// 5 (1).
	TurnsPerSession int
	// BaselineTurns is the number of turns run one at a time on a single
	// session first, the unloaded latency the others compare with. Zero
	// means 200 (50).
	BaselineTurns int
	// OfferedFraction sets the rate of the open-loop run that follows the
	// load: that fraction of the throughput the load measured, offered at
	// fixed intervals, TurnsPerSession turns per session. Zero means 0.8;
	// a negative value skips the run.
	OfferedFraction float64
}

func (c SessionsConfig) withDefaults(quick bool) SessionsConfig {
	if len(c.Counts) == 0 {
		c.Counts = []int{1000, 10000}
	}
	c.TurnsPerSession = orDefault(c.TurnsPerSession, 5, 1, quick)
	c.BaselineTurns = orDefault(c.BaselineTurns, 200, 50, quick)
	c.OfferedFraction = orDefault(c.OfferedFraction, 0.8, 0.8, quick)
	return c
}

// SessionsResult holds one row per session count.
type SessionsResult struct {
	// TurnsPerSession is the number of turns each session ran.
	TurnsPerSession int `json:"turns_per_session"`
	// Rows hold one result per session count.
	Rows []SessionsCount `json:"counts"`
}

// SessionsCount is the result of one session count.
type SessionsCount struct {
	// Sessions is the number of concurrent sessions.
	Sessions int `json:"sessions"`
	// Turns is the number of turns run under load.
	Turns int `json:"turns"`
	// TurnsPerSecond is the throughput of the whole run.
	TurnsPerSecond float64 `json:"turns_per_s"`
	// P50Millis and P99Millis are the turn latencies under load.
	P50Millis float64 `json:"p50_ms"`
	P99Millis float64 `json:"p99_ms"`
	// UnloadedP50Millis is the median latency of a turn alone, on the same
	// runtime before the load.
	UnloadedP50Millis float64 `json:"unloaded_p50_ms"`
	// PeakRSS is the process's peak resident set size during the run
	// (VmHWM, reset before it where the kernel allows).
	PeakRSS uint64 `json:"peak_rss_bytes"`
	// RSSPerIdleSession is the growth of the resident set size once every
	// session is idle and garbage is collected, divided by Sessions.
	RSSPerIdleSession float64 `json:"rss_per_idle_session_bytes"`
	// HeapPerIdleSession is the growth of the live Go heap, divided by
	// Sessions.
	HeapPerIdleSession float64 `json:"heap_per_idle_session_bytes"`
	// GoroutinesPerIdleSession is the growth of the goroutine count,
	// divided by Sessions.
	GoroutinesPerIdleSession float64 `json:"goroutines_per_idle_session"`
	// OfferedTurnsPerSecond is the rate of the open-loop run (a fraction
	// of TurnsPerSecond, see SessionsConfig.OfferedFraction); zero when it
	// did not run.
	OfferedTurnsPerSecond float64 `json:"offered_turns_per_s,omitempty"`
	// OfferedAchievedTurnsPerSecond is the rate the open-loop run
	// completed its turns at.
	OfferedAchievedTurnsPerSecond float64 `json:"offered_achieved_turns_per_s,omitempty"`
	// OfferedP50Millis and OfferedP99Millis are the turn latencies of the
	// open-loop run, each from the turn's scheduled start.
	OfferedP50Millis float64 `json:"offered_p50_ms,omitempty"`
	OfferedP99Millis float64 `json:"offered_p99_ms,omitempty"`
}

// Sessions measures many concurrent sessions. For each count it starts an
// in-memory runtime over an in-process scripted model (each turn: one
// lookup tool call and two model calls), measures the unloaded turn
// latency on one session, then starts every session at once, each running
// TurnsPerSession turns back to back. Memory is read after the sessions
// go idle; they stay resident (no idle passivation). Then the same
// sessions run an open-loop load at OfferedFraction of the throughput
// measured, whose latencies say what a turn costs at a rate the runtime
// sustains rather than in a queue of every session at once.
func Sessions(ctx context.Context, cfg SessionsConfig) (*SessionsResult, error) {
	cfg = cfg.withDefaults(false)
	res := &SessionsResult{TurnsPerSession: cfg.TurnsPerSession}
	for _, n := range cfg.Counts {
		row, err := sessionsRun(ctx, n, cfg)
		if err != nil {
			return nil, fmt.Errorf("%d sessions: %w", n, err)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

func sessionsRun(ctx context.Context, n int, cfg SessionsConfig) (SessionsCount, error) {
	row := SessionsCount{Sessions: n, Turns: n * cfg.TurnsPerSession}
	model, err := scripted.New(lookupScript(), scripted.Options{})
	if err != nil {
		return row, err
	}
	rt, err := actors.NewInMemory(actors.Config{Provider: model, Tools: lookupTools(), IdleTimeout: -1,
		Compaction: actors.Compaction{Disabled: true}})
	if err != nil {
		return row, err
	}
	defer func() { _ = rt.Shutdown(context.WithoutCancel(ctx)) }()

	turn := func(s *actors.Session) (time.Duration, error) {
		start := time.Now()
		res, err := s.Submit(ctx, messages.UserText("What is the value of alpha?"))
		if err != nil {
			return 0, err
		}
		return time.Since(start), checkTurn(res, 1)
	}
	probe, err := rt.Open(ctx, "unloaded")
	if err != nil {
		return row, err
	}
	unloaded := make([]float64, 0, cfg.BaselineTurns)
	for range cfg.BaselineTurns {
		d, err := turn(probe)
		if err != nil {
			return row, err
		}
		unloaded = append(unloaded, millis(d))
	}
	row.UnloadedP50Millis = median(unloaded)

	settle()
	rss0, heap0, g0 := rss(), heapLive(), runtime.NumGoroutine()
	resetPeakRSS()
	sessions := make([]*actors.Session, n)
	for i := range sessions {
		if sessions[i], err = rt.Open(ctx, fmt.Sprintf("load-%d", i)); err != nil {
			return row, err
		}
	}
	lat := make([][]float64, n)
	errs := make([]error, n)
	begin := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() {
			<-begin
			lat[i] = make([]float64, 0, cfg.TurnsPerSession)
			for range cfg.TurnsPerSession {
				d, err := turn(s)
				if err != nil {
					errs[i] = err
					return
				}
				lat[i] = append(lat[i], millis(d))
			}
		})
	}
	start := time.Now()
	close(begin)
	wg.Wait()
	elapsed := time.Since(start)
	all := make([]float64, 0, row.Turns)
	for i := range lat {
		if errs[i] != nil {
			return row, errs[i]
		}
		all = append(all, lat[i]...)
	}
	row.TurnsPerSecond = float64(len(all)) / elapsed.Seconds()
	row.P50Millis, row.P99Millis = percentile(all, 0.50), percentile(all, 0.99)

	lat, all = nil, nil
	settle()
	row.PeakRSS = peakRSS()
	rss1, heap1, g1 := rss(), heapLive(), runtime.NumGoroutine()
	row.RSSPerIdleSession = (float64(rss1) - float64(rss0)) / float64(n)
	row.HeapPerIdleSession = (float64(heap1) - float64(heap0)) / float64(n)
	row.GoroutinesPerIdleSession = float64(g1-g0) / float64(n)
	runtime.KeepAlive(sessions)

	if cfg.OfferedFraction > 0 {
		off, err := runOffered(ctx, sessions, row.Turns, cfg.OfferedFraction*row.TurnsPerSecond, turn)
		if err != nil {
			return row, fmt.Errorf("offered rate: %w", err)
		}
		row.OfferedTurnsPerSecond, row.OfferedAchievedTurnsPerSecond = off.rate, off.achieved
		row.OfferedP50Millis, row.OfferedP99Millis = off.p50, off.p99
	}
	return row, nil
}

// Table lays the result out.
func (r *SessionsResult) Table() Table {
	t := Table{
		Title: fmt.Sprintf("concurrent sessions (in-process scripted model, turns per session: %d, each 2 model calls + 1 tool call, in-memory journal)", r.TurnsPerSession),
		Columns: []string{"sessions", "turns/s", "p50 turn", "p99 turn", "unloaded p50", "peak RSS",
			"RSS / idle session", "heap / idle session", "goroutines / idle session",
			"offered turns/s", "achieved", "p50 / p99 at offered rate"},
		Notes: []string{
			"all sessions submit at once, so latency under load is mostly queueing behind the other sessions' turns;",
			"the idle figures include each session's journal, which this runtime keeps in its in-memory store;",
			"the offered rate is a fraction of the measured turns/s, submitted at fixed intervals (an open loop), each latency from its turn's scheduled start.",
		},
	}
	for _, row := range r.Rows {
		t.Rows = append(t.Rows, []string{fmtInt(row.Sessions), fmtRate(row.TurnsPerSecond),
			fmtFloat(row.P50Millis, 2) + " ms", fmtFloat(row.P99Millis, 2) + " ms", fmtFloat(row.UnloadedP50Millis, 3) + " ms",
			fmtMiB(float64(row.PeakRSS)), fmtKiB(row.RSSPerIdleSession), fmtKiB(row.HeapPerIdleSession), fmtFloat(row.GoroutinesPerIdleSession, 1),
			fmtRate(row.OfferedTurnsPerSecond), fmtRate(row.OfferedAchievedTurnsPerSecond),
			fmtFloat(row.OfferedP50Millis, 2) + " / " + fmtFloat(row.OfferedP99Millis, 2) + " ms"})
	}
	return t
}
