package harness_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/bench/peers/internal/harness"
)

// counter is a driver whose turns succeed until failAt (0 = never).
type counter struct {
	n      atomic.Int64
	failAt int64
}

var errTurn = errors.New("turn failed")

func (c *counter) Turn(context.Context) error {
	if n := c.n.Add(1); c.failAt > 0 && n == c.failAt {
		return errTurn
	}
	return nil
}

func (c *counter) Close() error { return nil }

func TestRun(t *testing.T) {
	tests := []struct {
		name      string
		opts      harness.Options
		failAt    int64
		wantErr   error
		wantTurns int64 // turns run, warm-up included
	}{
		{"sequential", harness.Options{Turns: 50, Warmup: 5}, 0, nil, 55},
		{"concurrent", harness.Options{Turns: 100, Concurrency: 8, Warmup: 10}, 0, nil, 110},
		{"fails", harness.Options{Turns: 100, Concurrency: 4}, 30, errTurn, -1},
		{"fails in warm-up", harness.Options{Turns: 100, Warmup: 10}, 3, errTurn, -1},
		{"no turns", harness.Options{}, 0, harness.ErrOptions, 0},
		{"negative concurrency", harness.Options{Turns: 1, Concurrency: -1}, 0, harness.ErrOptions, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &counter{failAt: tt.failAt}
			res, err := harness.Run(t.Context(), "test", d, tt.opts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Run error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantTurns >= 0 && d.n.Load() != tt.wantTurns {
				t.Errorf("ran %d turns, want %d", d.n.Load(), tt.wantTurns)
			}
			if err != nil {
				return
			}
			if res.Peer != "test" || res.Turns != tt.opts.Turns || res.Concurrency != max(tt.opts.Concurrency, 1) {
				t.Errorf("result %+v does not echo the options %+v", res, tt.opts)
			}
			if res.TurnsPerSecond <= 0 || res.P50Micros > res.P99Micros || res.PeakRSSKiB <= 0 {
				t.Errorf("implausible figures: %+v", res)
			}
		})
	}
}
