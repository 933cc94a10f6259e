package mcp

import (
	"context"
	"time"
)

// Backoff computes the delay before reconnection attempt n (1-based):
// min(Initial·2^(n-1), Max), plus a jitter of up to Jitter times that. The
// zero value waits 500ms, 1s, 2s, ... up to 30s, with up to 20% jitter.
type Backoff struct {
	// Initial is the first delay. Zero means 500ms.
	Initial time.Duration
	// Max caps the delay before jitter. Zero means 30s.
	Max time.Duration
	// Jitter is the largest fraction of the delay added at random. Zero
	// means 0.2; negative means none.
	Jitter float64
}

// Delay returns the delay before attempt n (n < 1 counts as 1); rnd draws
// uniformly from [0, 1) and may be nil (no jitter).
func (b Backoff) Delay(n int, rnd func() float64) time.Duration {
	initial, maxDelay, jitter := b.Initial, b.Max, b.Jitter
	if initial <= 0 {
		initial = 500 * time.Millisecond
	}
	if maxDelay <= 0 {
		maxDelay = 30 * time.Second
	}
	if jitter == 0 {
		jitter = 0.2
	}
	d := initial
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	d = min(d, maxDelay)
	if jitter > 0 && rnd != nil {
		d += time.Duration(float64(d) * jitter * rnd())
	}
	return d
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
