package providers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// The retry defaults a zero RetryPolicy uses.
const (
	// DefaultMaxAttempts is the number of attempts in all: the first call
	// and 2 retries.
	DefaultMaxAttempts = 3
	// DefaultInitial is the backoff before the first retry.
	DefaultInitial = time.Second
	// DefaultMaxDelay caps the exponential backoff.
	DefaultMaxDelay = 30 * time.Second
	// DefaultJitter is the largest extra wait, as a fraction of the backoff.
	DefaultJitter = 0.25
	// DefaultMaxRetryAfter caps the wait a server asks for with
	// Retry-After.
	DefaultMaxRetryAfter = 30 * time.Second
	// DefaultUnavailableDelay is the wait before each retry after a
	// KindUnavailable failure.
	DefaultUnavailableDelay = 250 * time.Millisecond
)

// ErrRetryPastDeadline marks a retryable failure that was not retried
// because the wait before the retry would have ended after the context's
// deadline. The error that carries it also wraps the failure itself, so
// KindOf and RetryAfterOf still read it.
var ErrRetryPastDeadline = errors.New("providers: the wait before the retry would pass the context deadline")

// RetryPolicy repeats calls that fail with a retryable error (see
// IsRetryable, or Retryable): rate limited, server, timeout and
// unavailable failures, at most MaxAttempts calls in all.
//
// The wait before retry n (1-based) is, in order of precedence: the
// server's Retry-After, capped at MaxRetryAfter; UnavailableDelay after a
// KindUnavailable failure; otherwise min(Initial·2^(n-1), Max). A jitter
// drawn uniformly from [0, Jitter × that) is added to the last two. When
// the wait would end after the context's deadline, the call is not retried
// and fails at once with the failure, marked with ErrRetryPastDeadline.
// Cancelling the context stops a wait at once.
//
// The zero value is the default policy: 3 attempts (1 call and 2 retries),
// 1 s doubling to 30 s, 25 % jitter, Retry-After honoured up to 30 s,
// 250 ms after an unreachable endpoint, real timers. A RetryPolicy is a
// value and safe for concurrent use as long as its funcs are.
//
// Exactly one layer of a stack should retry. actors.Runtime retries model
// calls itself with its Config.Retry and takes the retry layer off the
// providers it is given (see SingleAttempt); a program that calls a
// Provider directly retries through the provider's own policy (WithRetry,
// or openai.Options.Retry).
type RetryPolicy struct {
	// MaxAttempts is the number of calls in all, the first one included.
	// Zero means DefaultMaxAttempts (3); 1, or any negative value, means a
	// single call, never retried.
	MaxAttempts int
	// Initial is the backoff before the first retry. Zero means 1 s.
	Initial time.Duration
	// Max caps the exponential backoff (before jitter). Zero means 30 s.
	// It does not apply to a server's Retry-After; MaxRetryAfter does.
	Max time.Duration
	// Jitter is the largest extra wait, as a fraction of the backoff.
	// Zero means 0.25; negative means none.
	Jitter float64
	// MaxRetryAfter caps the wait a server asks for with Retry-After (the
	// error still reports the server's value). Zero or negative means
	// DefaultMaxRetryAfter (30 s).
	MaxRetryAfter time.Duration
	// UnavailableDelay is the wait before each retry after a
	// KindUnavailable failure (connection refused, unknown host), jitter
	// added. Zero or negative means DefaultUnavailableDelay (250 ms).
	UnavailableDelay time.Duration
	// Retryable reports whether a failure is worth retrying. Nil means
	// IsRetryable.
	Retryable func(err error) bool
	// Sleep waits d or until ctx is done, returning ctx's error in that case.
	// Nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for the jitter. Nil means math/rand/v2.
	Rand func() float64
	// OnRetry, when set, is called before each wait with the 1-based number
	// of the retry about to happen, the error that caused it and the wait.
	OnRetry func(retry int, err error, delay time.Duration)
}

// attempts returns the number of calls in all.
func (p RetryPolicy) attempts() int {
	switch {
	case p.MaxAttempts == 0:
		return DefaultMaxAttempts
	case p.MaxAttempts < 0:
		return 1
	}
	return p.MaxAttempts
}

// retryable reports whether err is worth retrying under p.
func (p RetryPolicy) retryable(err error) bool {
	if p.Retryable != nil {
		return p.Retryable(err)
	}
	return IsRetryable(err)
}

// Backoff returns the wait before retry n (1-based) when the server gave no
// Retry-After and the endpoint was reachable, jitter included.
func (p RetryPolicy) Backoff(n int) time.Duration {
	initial, ceiling := p.Initial, p.Max
	if initial <= 0 {
		initial = DefaultInitial
	}
	if ceiling <= 0 {
		ceiling = DefaultMaxDelay
	}
	d := min(initial, ceiling)
	for i := 1; i < n && d < ceiling; i++ {
		d = min(d*2, ceiling)
	}
	return p.jitter(d)
}

// jitter adds the policy's jitter to d.
func (p RetryPolicy) jitter(d time.Duration) time.Duration {
	j := p.Jitter
	if j == 0 {
		j = DefaultJitter
	}
	if j <= 0 {
		return d
	}
	r := rand.Float64
	if p.Rand != nil {
		r = p.Rand
	}
	return d + time.Duration(float64(d)*j*r())
}

// Delay returns the wait before retry n (1-based) after err: err's
// Retry-After capped at MaxRetryAfter when it has one, UnavailableDelay
// (with jitter) when err is KindUnavailable, otherwise Backoff(n).
func (p RetryPolicy) Delay(n int, err error) time.Duration {
	if ra := RetryAfterOf(err); ra > 0 {
		ceiling := p.MaxRetryAfter
		if ceiling <= 0 {
			ceiling = DefaultMaxRetryAfter
		}
		return min(ra, ceiling)
	}
	if KindOf(err) == KindUnavailable {
		d := p.UnavailableDelay
		if d <= 0 {
			d = DefaultUnavailableDelay
		}
		return p.jitter(d)
	}
	return p.Backoff(n)
}

// Do calls fn until it succeeds, fails with an error that is not retryable,
// or the attempts are used up, and returns fn's last error (saying how many
// attempts were made when there was more than one). It returns early, with
// the failure marked ErrRetryPastDeadline, when the wait before the next
// attempt would pass ctx's deadline. When ctx is cancelled during a wait it
// returns at once with an error that wraps ctx.Err().
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

// Retry is RetryPolicy.Do for a function that returns a value. The context
// fn receives tells the attempt's number (see Attempt).
func Retry[T any](ctx context.Context, p RetryPolicy, fn func(ctx context.Context) (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := fn(context.WithValue(ctx, attemptKey{}, attempt))
		if err == nil {
			return v, nil
		}
		if err := p.next(ctx, attempt, err); err != nil {
			return v, err
		}
	}
}

// next decides what follows attempt n (1-based) failing with err, and
// waits before the next attempt: nil means the call is to be made again.
// See decide for the errors it returns instead, and wait.
func (p RetryPolicy) next(ctx context.Context, n int, err error) error {
	d, derr := p.decide(ctx, n, err)
	if derr != nil {
		return derr
	}
	return p.wait(ctx, n, err, d)
}

// decide returns the wait before retrying attempt n (1-based), which failed
// with err, or the error to report instead of retrying: err itself when it
// is not retryable or ctx is done, err saying how many attempts were made
// when they are used up, or err marked ErrRetryPastDeadline when the wait
// would pass ctx's deadline.
func (p RetryPolicy) decide(ctx context.Context, n int, err error) (time.Duration, error) {
	switch {
	case !p.retryable(err) || ctx.Err() != nil:
		return 0, err
	case n >= p.attempts():
		if n == 1 {
			return 0, err
		}
		return 0, &gaveUpError{err: err, attempts: n}
	}
	d := p.Delay(n, err)
	if deadline, ok := ctx.Deadline(); ok {
		if left := time.Until(deadline); d >= left {
			return 0, &pastDeadlineError{err: err, wait: d, left: left}
		}
	}
	return d, nil
}

// wait calls OnRetry, then sleeps d before retry n after err. It returns an
// error wrapping ctx's error when ctx ends first.
func (p RetryPolicy) wait(ctx context.Context, n int, err error, d time.Duration) error {
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

// gaveUpError is a retryable failure after which the attempts were used
// up. It reads as the failure, followed by the number of attempts.
type gaveUpError struct {
	err      error
	attempts int
}

func (e *gaveUpError) Error() string {
	return fmt.Sprintf("%v (gave up after %d attempts)", e.err, e.attempts)
}

func (e *gaveUpError) Unwrap() error { return e.err }

// pastDeadlineError is a retryable failure that was not retried because
// the wait before the retry would pass the context's deadline.
type pastDeadlineError struct {
	err        error
	wait, left time.Duration
}

func (e *pastDeadlineError) Error() string {
	return fmt.Sprintf("%v (not retried: waiting %v would pass the context deadline, %v away)",
		e.err, e.wait, e.left.Round(time.Millisecond))
}

func (e *pastDeadlineError) Unwrap() []error { return []error{e.err, ErrRetryPastDeadline} }

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
