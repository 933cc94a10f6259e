package benchsuite

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// RecoveryConfig sizes the recovery workload. Zero fields take the
// defaults of the full run (quick-run defaults in parentheses).
type RecoveryConfig struct {
	// Dir is the parent of the temporary data directory. Empty means
	// os.TempDir().
	Dir string
	// Sessions is the number of sessions to resume. Zero means 1,000 (200).
	Sessions int
	// Turns is the number of turns each session holds. Zero means 3.
	Turns int
	// Workers is the number of goroutines opening sessions. Zero means 16.
	Workers int
	// Rounds is the number of measured restarts, each alternated with its
	// baseline. Zero means 3 (2).
	Rounds int
}

func (c RecoveryConfig) withDefaults(quick bool) RecoveryConfig {
	c.Sessions = orDefault(c.Sessions, 1000, 200, quick)
	c.Turns = orDefault(c.Turns, 3, 3, quick)
	c.Workers = orDefault(c.Workers, 16, 16, quick)
	c.Rounds = orDefault(c.Rounds, 3, 2, quick)
	return c
}

// RecoveryResult compares resuming every session through a restarted
// runtime with loading the same journals directly. Times are medians over
// rounds.
type RecoveryResult struct {
	// Sessions, Turns, Workers and Rounds repeat the configuration.
	Sessions int `json:"sessions"`
	Turns    int `json:"turns"`
	Workers  int `json:"workers"`
	Rounds   int `json:"rounds"`
	// RecoveryMillis is the time to start a runtime on the data directory
	// and open every session (activation journaled with sync durability,
	// state replayed) until each answers its status.
	RecoveryMillis float64 `json:"recovery_ms"`
	// BaselineMillis is the time to open the store and load every
	// session's state from its journal, without a runtime.
	BaselineMillis float64 `json:"baseline_ms"`
	// Ratio is the median of the per-round ratios recovery/baseline.
	Ratio float64 `json:"ratio"`
	// SessionsPerSecond is Sessions over RecoveryMillis.
	SessionsPerSecond float64 `json:"sessions_per_s"`
}

// Recovery measures a restart. It fills an on-disk data directory with
// Sessions sessions of Turns turns each (an in-process scripted model that
// answers with text), shuts the runtime down, then alternates the baseline
// (store open and a journal Load per session) with the recovery (actors.New
// on the directory and Open plus Status on every session by Workers
// goroutines). Every recovery journals an activation per session, so a
// later round has slightly longer journals to read, on both sides.
func Recovery(ctx context.Context, cfg RecoveryConfig) (*RecoveryResult, error) {
	cfg = cfg.withDefaults(false)
	dir, err := os.MkdirTemp(cfg.Dir, "agcore-bench-recovery-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ids := make([]string, cfg.Sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("rec-%05d", i)
	}
	model, err := scripted.New(scripted.Script{Stateless: true, Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "Noted."}}}}, scripted.Options{})
	if err != nil {
		return nil, err
	}
	newRuntime := func(d memory.Durability) (*actors.Runtime, error) {
		return actors.New(actors.Config{DataDir: dir, Durability: d, Provider: model, IdleTimeout: -1,
			Compaction: actors.Compaction{Disabled: true}})
	}

	rt, err := newRuntime(memory.DurabilityBatch)
	if err != nil {
		return nil, err
	}
	err = forEach(ids, 32, func(id string) error {
		s, err := rt.Open(ctx, id)
		if err != nil {
			return err
		}
		for k := range cfg.Turns {
			res, err := s.Submit(ctx, messages.UserText(fmt.Sprintf("%s, note %d", id, k)))
			if err != nil {
				return err
			}
			if err := checkTurn(res, 0); err != nil {
				return err
			}
		}
		return nil
	})
	if serr := rt.Shutdown(ctx); err == nil {
		err = serr
	}
	if err != nil {
		return nil, fmt.Errorf("populate: %w", err)
	}

	baseline := func() error {
		store, err := memory.Open(memory.Options{Dir: dir})
		if err != nil {
			return err
		}
		defer store.Close()
		j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
		if err != nil {
			return err
		}
		defer j.Close()
		for _, id := range ids {
			if _, err := j.Load(ctx, id); err != nil {
				return err
			}
		}
		return nil
	}
	// recovery restarts the runtime and resumes every session; the
	// shutdown that follows is not timed.
	recovery := func() (time.Duration, error) {
		start := time.Now()
		rt, err := newRuntime(memory.DurabilitySync)
		if err != nil {
			return 0, err
		}
		err = forEach(ids, cfg.Workers, func(id string) error {
			s, err := rt.Open(ctx, id)
			if err != nil {
				return err
			}
			st, err := s.Status(ctx)
			if err != nil {
				return err
			}
			if st.NextTurn < cfg.Turns {
				return fmt.Errorf("%w: %s resumed at turn %d, want %d", ErrUnexpected, id, st.NextTurn, cfg.Turns)
			}
			return nil
		})
		took := time.Since(start)
		if serr := rt.Shutdown(ctx); err == nil {
			err = serr
		}
		return took, err
	}
	var recTimes, baseTimes, ratios []float64
	for round := range cfg.Rounds {
		var rec, base time.Duration
		var err error
		if round%2 == 0 {
			if base, err = timeIt(baseline); err == nil {
				rec, err = recovery()
			}
		} else {
			if rec, err = recovery(); err == nil {
				base, err = timeIt(baseline)
			}
		}
		if err != nil {
			return nil, err
		}
		recTimes, baseTimes = append(recTimes, millis(rec)), append(baseTimes, millis(base))
		ratios = append(ratios, ratio(millis(rec), millis(base)))
	}
	res := &RecoveryResult{Sessions: cfg.Sessions, Turns: cfg.Turns, Workers: cfg.Workers, Rounds: cfg.Rounds,
		RecoveryMillis: median(recTimes), BaselineMillis: median(baseTimes), Ratio: median(ratios)}
	res.SessionsPerSecond = ratio(float64(cfg.Sessions), res.RecoveryMillis/1000)
	return res, nil
}

// timeIt returns how long f took.
func timeIt(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

// forEach calls f on every id from workers goroutines and returns the
// first error.
func forEach(ids []string, workers int, f func(string) error) error {
	next := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for id := range next {
				if err := f(id); err != nil {
					errs <- err
					for range next { // drain, so the feeder finishes
					}
					return
				}
			}
		})
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// Table lays the result out.
func (r *RecoveryResult) Table() Table {
	return Table{
		Title:   fmt.Sprintf("recovery after a restart (%s sessions of %d turns, on disk, %d opening goroutines, %d rounds)", fmtInt(r.Sessions), r.Turns, r.Workers, r.Rounds),
		Columns: []string{"restart + resume all", "per session", "sessions/s", "baseline: store open + journal loads", "vs baseline"},
		Rows: [][]string{{fmtFloat(r.RecoveryMillis, 0) + " ms", fmtFloat(1000*r.RecoveryMillis/float64(max(r.Sessions, 1)), 0) + " µs",
			fmtRate(r.SessionsPerSecond), fmtFloat(r.BaselineMillis, 0) + " ms", fmtRatio(r.Ratio)}},
		Notes: []string{
			"resuming a session journals its activation with sync durability (an fsync, shared by concurrent opens) and replays its state;",
			"the baseline reads the same state without a runtime, so the ratio is the cost of the actors and the activation write.",
		},
	}
}
