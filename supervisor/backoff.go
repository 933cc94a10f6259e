package supervisor

import "time"

// Backoff computes exponential delays with jitter: attempt n (1-based)
// waits min(Initial·2^(n-1), Max) plus a jitter drawn uniformly from
// [0, Jitter·that). The zero value waits 100ms, 200ms, 400ms, ... up to
// 30s, with 25% jitter.
type Backoff struct {
	// Initial is the delay of the first attempt. Zero means 100ms.
	Initial time.Duration
	// Max caps the delay before jitter. Zero means 30s.
	Max time.Duration
	// Jitter is the fraction of the delay added at random. Zero means 0.25;
	// negative means no jitter.
	Jitter float64
}

// Delay returns the delay before attempt n (n < 1 is taken as 1), drawing
// the jitter from r (nil means no jitter).
func (b Backoff) Delay(n int, r Rand) time.Duration {
	initial, maxDelay, jitter := b.Initial, b.Max, b.Jitter
	if initial <= 0 {
		initial = 100 * time.Millisecond
	}
	if maxDelay <= 0 {
		maxDelay = 30 * time.Second
	}
	if jitter == 0 {
		jitter = 0.25
	}
	if n < 1 {
		n = 1
	}
	d := initial
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	d = min(d, maxDelay)
	if jitter > 0 && r != nil {
		if span := int64(float64(d) * jitter); span > 0 {
			d += time.Duration(r.Int64N(span))
		}
	}
	return d
}
