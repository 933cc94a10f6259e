package harness

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrOptions is wrapped by Run's error for invalid Options.
var ErrOptions = errors.New("harness: invalid options")

// Options says how many turns to run and how.
type Options struct {
	// Turns is the number of measured turns. Required (at least 1).
	Turns int
	// Concurrency is the number of goroutines running turns. Zero means 1.
	Concurrency int
	// Warmup is the number of turns run, at the same concurrency, before
	// measuring. Zero runs none.
	Warmup int
}

// Run runs o.Warmup then o.Turns turns of d at o.Concurrency and measures
// the second batch. It stops at the first failed turn and returns its
// error, with the number of the turn.
func Run(ctx context.Context, peer string, d Driver, o Options) (Result, error) {
	if o.Turns < 1 || o.Concurrency < 0 || o.Warmup < 0 {
		return Result{}, fmt.Errorf("%w: turns %d, concurrency %d, warmup %d", ErrOptions, o.Turns, o.Concurrency, o.Warmup)
	}
	c := max(o.Concurrency, 1)
	if o.Warmup > 0 {
		if _, err := turns(ctx, d, o.Warmup, c); err != nil {
			return Result{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, err := cpuTime()
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	lat, err := turns(ctx, d, o.Turns, c)
	wall := time.Since(start)
	if err != nil {
		return Result{}, err
	}
	cpu1, err := cpuTime()
	if err != nil {
		return Result{}, err
	}
	runtime.ReadMemStats(&m1)
	rss, err := peakRSS()
	if err != nil {
		return Result{}, err
	}
	n := float64(o.Turns)
	return Result{
		Peer:             peer,
		Turns:            o.Turns,
		Concurrency:      c,
		Warmup:           o.Warmup,
		WallSeconds:      wall.Seconds(),
		TurnsPerSecond:   n / wall.Seconds(),
		CPUMicrosPerTurn: float64((cpu1 - cpu0).Microseconds()) / n,
		AllocsPerTurn:    float64(m1.Mallocs-m0.Mallocs) / n,
		BytesPerTurn:     float64(m1.TotalAlloc-m0.TotalAlloc) / n,
		GCPerKTurn:       float64(m1.NumGC-m0.NumGC) * 1000 / n,
		P50Micros:        percentile(lat, 0.50),
		P99Micros:        percentile(lat, 0.99),
		PeakRSSKiB:       rss,
		HeapInuseKiB:     m1.HeapInuse >> 10,
		GOMAXPROCS:       runtime.GOMAXPROCS(0),
		GoVersion:        runtime.Version(),
	}, nil
}

// turns runs n turns of d on c goroutines and returns their latencies,
// sorted. The first failure cancels the others.
func turns(ctx context.Context, d Driver, n, c int) ([]time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	lats := make([][]time.Duration, c)
	var wg sync.WaitGroup
	for w := range c {
		lats[w] = make([]time.Duration, 0, n/c+1)
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				if err := d.Turn(ctx); err != nil {
					cancel(fmt.Errorf("turn %d: %w", i, err))
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	all := slices.Concat(lats...)
	slices.Sort(all)
	return all, nil
}

// percentile returns the q-quantile of sorted, in microseconds (nearest
// rank).
func percentile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted)) + 0.5)
	i = min(max(i-1, 0), len(sorted)-1)
	return float64(sorted[i]) / float64(time.Microsecond)
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("harness: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// peakRSS is the process's peak resident set size, in KiB (Linux reports
// ru_maxrss in KiB).
func peakRSS() (int64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("harness: getrusage: %w", err)
	}
	return int64(ru.Maxrss), nil
}
