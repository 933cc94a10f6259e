package providers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// The retry defaults a zero RetryPolicy uses.
const (
	// DefaultMaxRetries is the number of retries after the first call.
	DefaultMaxRetries = 3
	// DefaultInitial is the backoff before the first retry.
	DefaultInitial = time.Second
	// DefaultMaxDelay caps the exponential backoff.
	DefaultMaxDelay = 30 * time.Second
	// DefaultJitter is the largest extra wait, as a fraction of the backoff.
	DefaultJitter = 0.25
)

// RetryPolicy repeats calls that fail with a retryable error (see
// IsRetryable): rate limited, server and timeout failures. Retry n (1-based)
// waits min(Initial·2^(n-1), Max) plus a jitter drawn uniformly from
// [0, Jitter × that), unless the error carries a Retry-After, which is then
// waited exactly. Cancelling the context stops a wait at once.
//
// The zero value is the default policy: 3 retries (at most 4 calls), 1 s
// doubling to 30 s, 25 % jitter, real timers. A RetryPolicy is a value and
// safe for concurrent use as long as its funcs are.
type RetryPolicy struct {
	// MaxRetries is how many times a failed call is repeated. Zero means 3;
	// negative disables retrying.
	MaxRetries int
	// Initial is the backoff before the first retry. Zero means 1 s.
	Initial time.Duration
	// Max caps the exponential backoff (before jitter). Zero means 30 s.
	// It does not cap a server's Retry-After.
	Max time.Duration
	// Jitter is the largest extra wait, as a fraction of the backoff.
	// Zero means 0.25; negative means none.
	Jitter float64
	// Sleep waits d or until ctx is done, returning ctx's error in that case.
	// Nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for the jitter. Nil means math/rand/v2.
	Rand func() float64
	// OnRetry, when set, is called before each wait with the 1-based number
	// of the retry about to happen, the error that caused it and the wait.
	OnRetry func(attempt int, err error, delay time.Duration)
}

func (p RetryPolicy) maxRetries() int {
	switch {
	case p.MaxRetries < 0:
		return 0
	case p.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return p.MaxRetries
}

// Backoff returns the wait before retry n (1-based) when the server gave no
// Retry-After, jitter included.
func (p RetryPolicy) Backoff(n int) time.Duration {
	initial, ceiling, jitter := p.Initial, p.Max, p.Jitter
	if initial <= 0 {
		initial = DefaultInitial
	}
	if ceiling <= 0 {
		ceiling = DefaultMaxDelay
	}
	if jitter == 0 {
		jitter = DefaultJitter
	}
	d := min(initial, ceiling)
	for i := 1; i < n && d < ceiling; i++ {
		d = min(d*2, ceiling)
	}
	if jitter > 0 {
		r := rand.Float64
		if p.Rand != nil {
			r = p.Rand
		}
		d += time.Duration(float64(d) * jitter * r())
	}
	return d
}

// Delay returns the wait before retry n (1-based) after err: err's
// Retry-After when it has one, otherwise Backoff(n).
func (p RetryPolicy) Delay(n int, err error) time.Duration {
	if ra := RetryAfterOf(err); ra > 0 {
		return ra
	}
	return p.Backoff(n)
}

// Do calls fn until it succeeds, fails with an error that is not retryable,
// or the retries are used up, and returns fn's last error. When ctx is
// cancelled during a wait it returns at once with an error that wraps
// ctx.Err().
func (p RetryPolicy) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	_, err := Retry(ctx, p, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, fn(ctx)
	})
	return err
}

type attemptKey struct{}

// Attempt returns the 1-based number of the call in progress when ctx comes
// from a RetryPolicy, or 0 otherwise. Providers use it to label their logs.
func Attempt(ctx context.Context) int {
	n, _ := ctx.Value(attemptKey{}).(int)
	return n
}

// Retry is RetryPolicy.Do for a function that returns a value.
func Retry[T any](ctx context.Context, p RetryPolicy, fn func(ctx context.Context) (T, error)) (T, error) {
	limit := p.maxRetries()
	for attempt := 1; ; attempt++ {
		v, err := fn(context.WithValue(ctx, attemptKey{}, attempt))
		if err == nil {
			return v, nil
		}
		if attempt > limit || !IsRetryable(err) || ctx.Err() != nil {
			return v, err
		}
		if werr := p.wait(ctx, attempt, err); werr != nil {
			var zero T
			return zero, werr
		}
	}
}

// wait sleeps before retry n after err.
func (p RetryPolicy) wait(ctx context.Context, n int, err error) error {
	d := p.Delay(n, err)
	if p.OnRetry != nil {
		p.OnRetry(n, err, d)
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = sleepTimer
	}
	if serr := sleep(ctx, d); serr != nil {
		if cerr := ctx.Err(); cerr != nil {
			serr = cerr
		}
		return fmt.Errorf("providers: retry %d abandoned after %v: %w", n, err, serr)
	}
	return nil
}

// sleepTimer waits d or until ctx is done.
func sleepTimer(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
