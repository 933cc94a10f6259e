package benchsuite

// This file holds the idle-sessions workload: the memory an idle session
// costs with its journal on disk, with every actor resident and once the
// runtime has passivated them.

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// IdleTurns is the number of turns each session of the idle-sessions
// workload runs before it is left idle: each turn is a user message and a
// text reply, so a session holds a history of 2*IdleTurns messages.
const IdleTurns = 5

// IdleConfig sizes the idle-sessions workload. Zero fields take the
// defaults of the full run (quick-run defaults in parentheses).
type IdleConfig struct {
	// Dir is the parent of the temporary data directories. Empty means
	// os.TempDir().
	Dir string
	// Counts are the numbers of idle sessions, each measured on runtimes
	// of its own. Empty means 1,000 and 10,000 (200 and 1,000).
	Counts []int
	// IdleTimeout is the runtime's Config.IdleTimeout in the passivated
	// run: a session passivates between one and two of it after its last
	// message. Zero means 200 ms.
	IdleTimeout time.Duration
	// Workers is the number of goroutines running the sessions' turns,
	// each session's turns back to back. Zero means 32.
	Workers int
	// Reactivated is the number of passivated sessions given one more
	// turn, to check that each is answered from its journal. Zero means
	// 100 (20); it is capped at the session count.
	Reactivated int
	// Quiet is how long the sessions are left idle (once passivated, in
	// the passivated run) before memory is read, so that what the store
	// keeps only while it is being written goes: Badger pools the buffers
	// of the tables it built from its memtables and frees one every two
	// seconds without a new table, up to eight. Zero means 20 s (none);
	// negative means none.
	Quiet time.Duration

	// atIdle, when set, is called with the session count just before
	// memory is read, after a garbage collection: with phase
	// "live-baseline" or "passivated-baseline" before the sessions are
	// opened, and "live" or "passivated" once every session is idle. The
	// benchmarks write heap profiles there, to be compared with pprof's
	// -diff_base.
	atIdle func(phase string, n int)
}

func (c IdleConfig) withDefaults(quick bool) IdleConfig {
	if len(c.Counts) == 0 {
		c.Counts = []int{1000, 10000}
		if quick {
			c.Counts = []int{200, 1000}
		}
	}
	c.IdleTimeout = cmp.Or(c.IdleTimeout, 200*time.Millisecond)
	c.Workers = cmp.Or(c.Workers, 32)
	c.Reactivated = orDefault(c.Reactivated, 100, 20, quick)
	c.Quiet = orDefault(c.Quiet, 20*time.Second, -1, quick)
	return c
}

// IdleResult holds one row per session count.
type IdleResult struct {
	// TurnsPerSession is the number of turns each session ran (IdleTurns).
	TurnsPerSession int `json:"turns_per_session"`
	// MessagesPerSession is the length of each session's history.
	MessagesPerSession int `json:"messages_per_session"`
	// IdleTimeoutMillis is the idle timeout of the passivated run.
	IdleTimeoutMillis float64 `json:"idle_timeout_ms"`
	// QuietSeconds is how long the idle sessions were left before memory
	// was read (IdleConfig.Quiet; 0 for none).
	QuietSeconds float64 `json:"quiet_s"`
	// Rows hold one result per session count.
	Rows []IdleCount `json:"counts"`
}

// IdleCount is the result of one session count.
type IdleCount struct {
	// Sessions is the number of idle sessions.
	Sessions int `json:"sessions"`
	// Live is the memory of the sessions on a runtime that does not
	// passivate them (IdleTimeout -1): every session's actor is resident.
	Live IdleMemory `json:"live"`
	// Passivated is the memory of the same sessions on a runtime with
	// IdleTimeout set, once every session has been passivated.
	Passivated IdleMemory `json:"passivated"`
	// PassivationMillis is the time from the end of the last session's
	// turns until no session actor ran any more.
	PassivationMillis float64 `json:"passivation_ms"`
	// Reactivated is the number of passivated sessions that were given one
	// more turn and answered it, each reactivated from its journal with
	// its whole history.
	Reactivated int `json:"reactivated"`
	// ReactivatedP50Millis is the median latency of those turns, the
	// reactivation included.
	ReactivatedP50Millis float64 `json:"reactivated_p50_ms"`
}

// IdleMemory is what the idle sessions of one runtime add to the process,
// measured against the same runtime before they were opened (after one
// warm-up turn), once garbage is collected and freed memory returned to
// the operating system.
type IdleMemory struct {
	// Active is the number of session actors running when memory was
	// read (Runtime.Sessions).
	Active int `json:"active_sessions"`
	// RSSPerSession is the growth of the resident set size (VmRSS),
	// divided by the session count; 0 where /proc is not available.
	RSSPerSession float64 `json:"rss_per_session_bytes"`
	// FileRSSPerSession is the part of RSSPerSession that maps files
	// (RssFile: Badger's memtable logs and tables), which the kernel may
	// drop under memory pressure and read again.
	FileRSSPerSession float64 `json:"file_rss_per_session_bytes"`
	// HeapPerSession is the growth of the live Go heap, divided by the
	// session count.
	HeapPerSession float64 `json:"heap_per_session_bytes"`
	// GoroutinesPerSession is the growth of the goroutine count, divided
	// by the session count.
	GoroutinesPerSession float64 `json:"goroutines_per_session"`
}

// IdleSessions measures what an idle session costs as the runtime's
// memory target defines it: a 2*IdleTurns-message history and the journal
// on disk. For each count it runs two runtimes in turn, each on a fresh
// data directory with batch durability and the in-process scripted model
// (every turn: a user message and a text reply): one that never passivates
// a session, and one with IdleTimeout set. On both, every session runs
// IdleTurns turns (Workers sessions at a time) and is then left idle; the
// first runtime's memory is read after Quiet, the second's Quiet after the
// runtime lists no active session. Then Reactivated of the passivated sessions
// are given one more turn each, which must be answered with the session's
// whole history replayed from the journal.
func IdleSessions(ctx context.Context, cfg IdleConfig) (*IdleResult, error) {
	cfg = cfg.withDefaults(false)
	res := &IdleResult{TurnsPerSession: IdleTurns, MessagesPerSession: 2 * IdleTurns,
		IdleTimeoutMillis: millis(cfg.IdleTimeout), QuietSeconds: max(cfg.Quiet, 0).Seconds()}
	model, err := scripted.New(noteScript(), scripted.Options{})
	if err != nil {
		return nil, err
	}
	for _, n := range cfg.Counts {
		row := IdleCount{Sessions: n}
		live, err := idleOnDisk(ctx, n, cfg, model, -1)
		if err != nil {
			return nil, fmt.Errorf("%d live sessions: %w", n, err)
		}
		row.Live = live.mem
		pas, err := idleOnDisk(ctx, n, cfg, model, cfg.IdleTimeout)
		if err != nil {
			return nil, fmt.Errorf("%d passivated sessions: %w", n, err)
		}
		row.Passivated, row.PassivationMillis = pas.mem, millis(pas.passivation)
		row.Reactivated, row.ReactivatedP50Millis = len(pas.reactivated), median(pas.reactivated)
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// noteScript answers every message with a short text: a turn is one model
// request and adds two messages to the history.
func noteScript() scripted.Script {
	return scripted.Script{Stateless: true, Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "Noted."}},
	}}
}

// idleRun is the outcome of one runtime of the idle-sessions workload.
type idleRun struct {
	mem         IdleMemory
	passivation time.Duration // last turn's end to no active session
	reactivated []float64     // latencies of the turns after passivation, in ms
}

// idleOnDisk runs the idle-sessions workload on a runtime of its own over a
// fresh data directory, which it removes afterwards. A positive idle
// timeout passivates the sessions, and idleOnDisk waits for it; a negative
// one keeps them resident.
func idleOnDisk(ctx context.Context, n int, cfg IdleConfig, model *scripted.Provider, idle time.Duration) (idleRun, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "agcore-bench-idle-")
	if err != nil {
		return idleRun{}, err
	}
	defer os.RemoveAll(dir)
	rt, err := actors.New(actors.Config{DataDir: dir, Durability: memory.DurabilityBatch, Provider: model,
		IdleTimeout: idle, Compaction: actors.Compaction{Disabled: true}})
	if err != nil {
		return idleRun{}, err
	}
	defer func() { _ = rt.Shutdown(context.WithoutCancel(ctx)) }()
	return idleMeasure(ctx, rt, n, cfg, idle > 0)
}

// idleMeasure opens n sessions on rt, runs IdleTurns turns on each and
// reads the memory they hold once idle. With passivate, it first waits
// until rt has passivated every session, then checks that the first
// cfg.Reactivated of them answer one more turn from their journal.
func idleMeasure(ctx context.Context, rt *actors.Runtime, n int, cfg IdleConfig, passivate bool) (idleRun, error) {
	var run idleRun
	phase := "live"
	if passivate {
		phase = "passivated"
	}
	// One turn first warms the runtime's pools and the store, so that the
	// baseline holds what any runtime holds.
	probe, err := rt.Open(ctx, "idle-probe")
	if err != nil {
		return run, err
	}
	if err := noteTurn(ctx, probe, 0); err != nil {
		return run, err
	}
	if passivate {
		if err := waitPassivated(ctx, rt, cfg.IdleTimeout); err != nil {
			return run, err
		}
	}
	settle()
	if cfg.atIdle != nil {
		cfg.atIdle(phase+"-baseline", n)
	}
	rss0, file0, heap0, g0 := rss(), rssFile(), heapLive(), runtime.NumGoroutine()

	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("idle-%05d", i)
	}
	// The first Reactivated sessions are the sample checked after
	// passivation; index is read-only while the turns run, and each
	// worker writes only its session's slots.
	sample := make([]*actors.Session, min(cfg.Reactivated, n))
	activations := make([]uint64, len(sample))
	index := make(map[string]int, len(sample))
	for i, id := range ids[:len(sample)] {
		index[id] = i
	}
	err = forEach(ids, cfg.Workers, func(id string) error {
		s, err := rt.Open(ctx, id)
		if err != nil {
			return err
		}
		for k := range IdleTurns {
			if err := noteTurn(ctx, s, k); err != nil {
				return err
			}
		}
		i, ok := index[id]
		if !ok {
			return nil
		}
		st, err := s.Status(ctx)
		if err != nil {
			return err
		}
		sample[i], activations[i] = s, st.Activation
		return nil
	})
	if err != nil {
		return run, err
	}
	if passivate {
		start := time.Now()
		if err := waitPassivated(ctx, rt, cfg.IdleTimeout); err != nil {
			return run, err
		}
		run.passivation = time.Since(start)
	}
	if cfg.Quiet > 0 {
		// The measure is of sessions left idle for this long: a
		// duration, not a wait for an event.
		select {
		case <-time.After(cfg.Quiet):
		case <-ctx.Done():
			return run, ctx.Err()
		}
	}
	settle()
	if cfg.atIdle != nil {
		cfg.atIdle(phase, n)
	}
	rss1, file1, heap1, g1 := rss(), rssFile(), heapLive(), runtime.NumGoroutine()
	run.mem = IdleMemory{
		Active:               len(rt.Sessions()),
		RSSPerSession:        (float64(rss1) - float64(rss0)) / float64(n),
		FileRSSPerSession:    (float64(file1) - float64(file0)) / float64(n),
		HeapPerSession:       (float64(heap1) - float64(heap0)) / float64(n),
		GoroutinesPerSession: float64(g1-g0) / float64(n),
	}
	if !passivate {
		return run, nil
	}
	for i, s := range sample {
		d, err := reactivate(ctx, s, activations[i])
		if err != nil {
			return run, err
		}
		run.reactivated = append(run.reactivated, millis(d))
	}
	return run, nil
}

// noteTurn submits the k-th note of a session and checks that it is
// answered with text.
func noteTurn(ctx context.Context, s *actors.Session, k int) error {
	res, err := s.Submit(ctx, messages.UserText(fmt.Sprintf("Remember note %d of %s.", k, s.ID())))
	if err != nil {
		return err
	}
	return checkTurn(res, 0)
}

// reactivate gives passivated session s one more turn and returns how long
// it took. The session must answer it as a new activation, from a history
// of every earlier turn: the actor that answers was started from the
// journal, not kept.
func reactivate(ctx context.Context, s *actors.Session, activation uint64) (time.Duration, error) {
	start := time.Now()
	if err := noteTurn(ctx, s, IdleTurns); err != nil {
		return 0, fmt.Errorf("reactivating %s: %w", s.ID(), err)
	}
	took := time.Since(start)
	st, err := s.Status(ctx)
	if err != nil {
		return 0, err
	}
	if want := 2 * (IdleTurns + 1); st.Messages != want || st.NextTurn != IdleTurns+1 || st.Activation <= activation {
		return 0, fmt.Errorf("%w: session %s after reactivation: %d messages, next turn %d, activation %d (was %d), want %d messages, next turn %d, a later activation",
			ErrUnexpected, s.ID(), st.Messages, st.NextTurn, st.Activation, activation, want, IdleTurns+1)
	}
	return took, nil
}

// waitPassivated polls rt until it lists no active session. It gives up
// when ctx ends or after twice idle plus a minute, well past the two idle
// timeouts a session may take to passivate.
func waitPassivated(ctx context.Context, rt *actors.Runtime, idle time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, 2*idle+time.Minute)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		active := len(rt.Sessions())
		if active == 0 {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%w: %d sessions still active after an idle timeout of %v: %w",
				ErrUnexpected, active, idle, ctx.Err())
		}
	}
}

// Table lays the result out.
func (r *IdleResult) Table() Table {
	t := Table{
		Title: fmt.Sprintf("idle sessions (history of %d messages, journal on disk with batch durability, in-process scripted model)", r.MessagesPerSession),
		Columns: []string{"sessions", "RSS / session, live", "of it files", "heap / session, live", "goroutines / session, live",
			"RSS / session, passivated", "of it files", "heap / session, passivated", "passivation", "reactivated", "p50 reactivated turn"},
		Notes: []string{
			"live: the runtime never passivates (IdleTimeout -1), every session's actor stays resident;",
			fmt.Sprintf("passivated: IdleTimeout %s, read once the runtime lists no active session; passivation is the wait from the last turn's end;", fmtFloat(r.IdleTimeoutMillis, 0)+" ms"),
			"of it files: the part of the RSS that maps files (RssFile: Badger's memtable logs and tables), which the kernel may drop and read again;",
			"reactivated: passivated sessions given one more turn, each answered by a new activation with its whole history replayed from the journal;",
			"each figure is the growth of the process over the same runtime before the sessions were opened, divided by the session count,",
		},
	}
	if r.QuietSeconds > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("read after the sessions were left idle %s s (Badger frees the buffers of the tables it built meanwhile), a GC and a return of freed memory to the OS.", fmtFloat(r.QuietSeconds, 0)))
	} else {
		t.Notes = append(t.Notes, "read at once after a GC and a return of freed memory to the OS: Badger's pooled table-builder buffers may still be counted.")
	}
	for _, row := range r.Rows {
		t.Rows = append(t.Rows, []string{fmtInt(row.Sessions),
			fmtKiB(row.Live.RSSPerSession), fmtKiB(row.Live.FileRSSPerSession), fmtKiB(row.Live.HeapPerSession), fmtFloat(row.Live.GoroutinesPerSession, 1),
			fmtKiB(row.Passivated.RSSPerSession), fmtKiB(row.Passivated.FileRSSPerSession), fmtKiB(row.Passivated.HeapPerSession),
			fmtFloat(row.PassivationMillis, 0) + " ms", fmtInt(row.Reactivated), fmtFloat(row.ReactivatedP50Millis, 2) + " ms"})
	}
	return t
}
