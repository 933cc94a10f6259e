package actors_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

const (
	recoverySessions = 1000
	recoveryTurns    = 3
)

func recoveryConfig(dir string, d memory.Durability) actors.Config {
	return actors.Config{DataDir: dir, Durability: d, Provider: scripted.MustNew(textScript("noted"), scripted.Options{}),
		IdleTimeout: -1, Compaction: actors.Compaction{Disabled: true}}
}

func recoveryID(i int) string { return fmt.Sprintf("rec-%04d", i) }

// populateRecovery runs recoveryTurns turns in each of recoverySessions
// sessions on the data directory dir, then shuts the runtime down.
func populateRecovery(b *testing.B, dir string) {
	b.Helper()
	rt, err := actors.New(recoveryConfig(dir, memory.DurabilityBatch))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ids := make(chan string)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for id := range ids {
				sess, err := rt.Open(ctx, id)
				if err != nil {
					b.Error(err)
					continue
				}
				for k := range recoveryTurns {
					if _, err := sess.Submit(ctx, messages.UserText(fmt.Sprintf("%s turn %d", id, k))); err != nil {
						b.Error(err)
					}
				}
			}
		})
	}
	for i := range recoverySessions {
		ids <- recoveryID(i)
	}
	close(ids)
	wg.Wait()
	if err := rt.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
}

// loadAll is the baseline: open the store and load every session's state
// from its journal, without a runtime. It returns the time taken by each
// step.
func loadAll(b *testing.B, dir string) (open, load time.Duration) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		b.Fatal(err)
	}
	open = time.Since(start)
	for i := range recoverySessions {
		if _, err := j.Load(ctx, recoveryID(i)); err != nil {
			b.Fatal(err)
		}
	}
	load = time.Since(start) - open
	if err := j.Close(); err != nil {
		b.Fatal(err)
	}
	if err := store.Close(); err != nil {
		b.Fatal(err)
	}
	return open, load
}

// BenchmarkRecovery measures a restart: the time to start a runtime on a
// data directory holding 1,000 sessions of a few turns each and to open
// (activate and replay) every one of them. Each session's activation is
// journaled, so the durability of the reopened runtime matters; the
// sessions are opened one by one or by 16 workers. The baseline, measured
// in the same run, opens the store (ms/store-open) and loads every
// session's state from its journal without a runtime (ms/journal-load);
// x-baseline is the ratio of the recovery to their sum.
func BenchmarkRecovery(b *testing.B) {
	dir := b.TempDir()
	populateRecovery(b, dir)
	cases := []struct {
		name       string
		durability memory.Durability
		workers    int
	}{
		{"open=sequential/durability=sync", memory.DurabilitySync, 1},
		{"open=parallel16/durability=sync", memory.DurabilitySync, 16},
		{"open=parallel16/durability=batch", memory.DurabilityBatch, 16},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			var recovery, open, load time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				o, l := loadAll(b, dir)
				open, load = open+o, load+l
				b.StartTimer()
				start := time.Now()
				rt, err := actors.New(recoveryConfig(dir, c.durability))
				if err != nil {
					b.Fatal(err)
				}
				ids := make(chan string)
				var wg sync.WaitGroup
				for range c.workers {
					wg.Go(func() {
						for id := range ids {
							s, err := rt.Open(ctx, id)
							if err != nil {
								b.Error(err)
								continue
							}
							if st, err := s.Status(ctx); err != nil || st.NextTurn < recoveryTurns {
								b.Errorf("%s recovered as %+v, %v", id, st, err)
							}
						}
					})
				}
				for i := range recoverySessions {
					ids <- recoveryID(i)
				}
				close(ids)
				wg.Wait()
				recovery += time.Since(start)
				b.StopTimer()
				if err := rt.Shutdown(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(float64(recovery.Milliseconds())/n, "ms/recovery")
			b.ReportMetric(float64(recovery.Microseconds())/n/recoverySessions, "µs/session")
			b.ReportMetric(float64(open.Milliseconds())/n, "ms/store-open")
			b.ReportMetric(float64(load.Milliseconds())/n, "ms/journal-load")
			b.ReportMetric(recovery.Seconds()/(open+load).Seconds(), "x-baseline")
		})
	}
}
