package benchsuite

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// JournalConfig sizes the journal workload. Zero fields take the defaults
// of the full run (quick-run defaults in parentheses).
type JournalConfig struct {
	// Dir is the parent of the temporary data directories. Empty means
	// os.TempDir().
	Dir string
	// Writers is the number of concurrent appenders, each on a session of
	// its own. Zero means 64.
	Writers int
	// Phase is how long each durability mode appends in a round. Zero means
	// 1s (300ms).
	Phase time.Duration
	// Rounds is the number of rounds, each running every mode once in an
	// order that rotates. Zero means 5 (3).
	Rounds int
}

func (c JournalConfig) withDefaults(quick bool) JournalConfig {
	c.Writers = orDefault(c.Writers, 64, 64, quick)
	c.Phase = orDefault(c.Phase, time.Second, 300*time.Millisecond, quick)
	c.Rounds = orDefault(c.Rounds, 5, 3, quick)
	return c
}

// JournalResult compares journal appends across durability modes.
type JournalResult struct {
	// Writers is the number of concurrent appenders.
	Writers int `json:"writers"`
	// Rounds is the number of rounds.
	Rounds int `json:"rounds"`
	// Rows hold one result per durability mode: sync, batch, none.
	Rows []JournalMode `json:"modes"`
	// BatchOverSync is the median over rounds of the batch rate over the
	// sync rate.
	BatchOverSync float64 `json:"batch_over_sync"`
}

// JournalMode is the result of one durability mode.
type JournalMode struct {
	// Durability names the mode.
	Durability string `json:"durability"`
	// AppendsPerSecond is the median over rounds.
	AppendsPerSecond float64 `json:"appends_per_s"`
	// P50Micros and P99Micros are append latencies over every round.
	P50Micros float64 `json:"p50_us"`
	P99Micros float64 `json:"p99_us"`
}

// journalModes are the modes measured; sync comes first, as the baseline.
var journalModes = [...]memory.Durability{memory.DurabilitySync, memory.DurabilityBatch, memory.DurabilityNone}

// Journal measures appends per second of concurrent appenders (one tool
// result of about 200 bytes per append) on an on-disk store per
// durability mode, alternating the modes in rounds.
func Journal(ctx context.Context, cfg JournalConfig) (*JournalResult, error) {
	cfg = cfg.withDefaults(false)
	dir, err := os.MkdirTemp(cfg.Dir, "agcore-bench-journal-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	journals := make([]*memory.BadgerJournal, len(journalModes))
	for i, d := range journalModes {
		store, err := memory.Open(memory.Options{Dir: fmt.Sprintf("%s/%s", dir, d)})
		if err != nil {
			return nil, err
		}
		defer store.Close()
		if journals[i], err = memory.NewJournal(store, memory.JournalOptions{Durability: d, SnapshotEvery: -1}); err != nil {
			return nil, err
		}
		defer journals[i].Close()
	}
	ev := messages.ToolResult{CallID: "call_1", Name: "read_file", Content: strings.Repeat("a tool result of a typical size. ", 6)}
	rates := make([][]float64, len(journalModes))
	lats := make([][]float64, len(journalModes))
	tails := make([][]uint64, len(journalModes)) // per mode, per writer
	for i := range tails {
		tails[i] = make([]uint64, cfg.Writers)
	}
	var ratios []float64
	for round := range cfg.Rounds {
		rate := make([]float64, len(journalModes))
		for k := range journalModes {
			i := (k + round) % len(journalModes)
			n, l, elapsed, err := appendPhase(ctx, journals[i], tails[i], cfg.Phase, ev)
			if err != nil {
				return nil, fmt.Errorf("journal %s: %w", journalModes[i], err)
			}
			rate[i] = float64(n) / elapsed.Seconds()
			rates[i] = append(rates[i], rate[i])
			lats[i] = append(lats[i], l...)
		}
		ratios = append(ratios, ratio(rate[1], rate[0]))
	}
	res := &JournalResult{Writers: cfg.Writers, Rounds: cfg.Rounds, BatchOverSync: median(ratios)}
	for i, d := range journalModes {
		res.Rows = append(res.Rows, JournalMode{Durability: d.String(), AppendsPerSecond: median(rates[i]),
			P50Micros: percentile(lats[i], 0.5), P99Micros: percentile(lats[i], 0.99)})
	}
	return res, nil
}

// appendPhase runs len(tails) appenders on j for about d and returns the
// number of appends, their latencies in µs and the time taken. tails holds
// each appender's session tail and is updated.
func appendPhase(ctx context.Context, j *memory.BadgerJournal, tails []uint64, d time.Duration, ev messages.JournalEvent) (int, []float64, time.Duration, error) {
	var stop atomic.Bool
	lat := make([][]float64, len(tails))
	errs := make([]error, len(tails))
	var wg sync.WaitGroup
	start := time.Now()
	for w := range tails {
		wg.Go(func() {
			id := fmt.Sprintf("writer-%d", w)
			for !stop.Load() {
				t0 := time.Now()
				tail, err := j.Append(ctx, id, 0, tails[w], ev)
				if err != nil {
					errs[w] = err
					return
				}
				lat[w] = append(lat[w], micros(time.Since(t0)))
				tails[w] = tail
			}
		})
	}
	timer := time.NewTimer(d)
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	timer.Stop()
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	var all []float64
	for w := range tails {
		if errs[w] != nil {
			return 0, nil, 0, errs[w]
		}
		all = append(all, lat[w]...)
	}
	return len(all), all, elapsed, ctx.Err()
}

// Table lays the result out.
func (r *JournalResult) Table() Table {
	t := Table{
		Title:   fmt.Sprintf("journal appends (%d concurrent appenders, one ~200-byte event each, on disk, %d alternating rounds)", r.Writers, r.Rounds),
		Columns: []string{"durability", "appends/s (median)", "vs sync", "p50 append", "p99 append"},
		Notes: []string{
			fmt.Sprintf("batch/sync, median of the per-round ratios: %s. sync and batch both fsync before an append returns;", fmtRatio(r.BatchOverSync)),
			"batch shares one transaction and one fsync among the appends waiting together; none does not fsync.",
		},
	}
	base := 0.0
	for _, row := range r.Rows {
		if base == 0 {
			base = row.AppendsPerSecond
		}
		t.Rows = append(t.Rows, []string{row.Durability, fmtRate(row.AppendsPerSecond), fmtRatio(ratio(row.AppendsPerSecond, base)),
			fmtFloat(row.P50Micros, 0) + " µs", fmtFloat(row.P99Micros, 0) + " µs"})
	}
	return t
}
