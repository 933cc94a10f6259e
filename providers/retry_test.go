package providers_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agcore/agcore/providers"
)

// recorder is an injected Sleep that records the waits instead of sleeping.
type recorder struct{ delays []time.Duration }

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.delays = append(r.delays, d)
	return ctx.Err()
}

var (
	errServer = &providers.Error{Kind: providers.KindServer, Status: 500}
	errAuth   = &providers.Error{Kind: providers.KindAuthentication, Status: 401}
)

// failing returns fn that fails with errs in turn and then succeeds,
// counting its calls in *calls.
func failing(calls *int, errs ...error) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		if *calls <= len(errs) {
			return errs[*calls-1]
		}
		return nil
	}
}

func TestRetryPolicy_Do(t *testing.T) {
	rate := &providers.Error{Kind: providers.KindRateLimited, Status: 429, RetryAfter: 7 * time.Second}
	tests := []struct {
		name      string
		policy    providers.RetryPolicy
		errs      []error
		wantCalls int
		wantErr   error
		delays    []time.Duration
	}{
		{"success first time", providers.RetryPolicy{}, nil, 1, nil, nil},
		{"three failures then success", providers.RetryPolicy{},
			[]error{errServer, errServer, errServer}, 4, nil,
			[]time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second}},
		{"four failures exhaust the default", providers.RetryPolicy{},
			[]error{errServer, errServer, errServer, errServer}, 4, errServer,
			[]time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second}},
		{"not retryable", providers.RetryPolicy{}, []error{errAuth}, 1, errAuth, nil},
		{"plain error not retryable", providers.RetryPolicy{}, []error{errors.New("boom")}, 1, nil, nil},
		{"retry-after wins", providers.RetryPolicy{}, []error{rate}, 2, nil, []time.Duration{7 * time.Second}},
		{"retries disabled", providers.RetryPolicy{MaxRetries: -1}, []error{errServer}, 1, errServer, nil},
		{"cap", providers.RetryPolicy{MaxRetries: 7, Initial: 4 * time.Second, Max: 10 * time.Second},
			[]error{errServer, errServer, errServer, errServer}, 5, nil,
			[]time.Duration{4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}},
		{"wrapped retryable", providers.RetryPolicy{MaxRetries: 1},
			[]error{fmt.Errorf("ctx: %w", context.DeadlineExceeded)}, 2, nil, []time.Duration{time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			p := tt.policy
			p.Sleep = rec.sleep
			p.Rand = func() float64 { return 0 }
			calls := 0
			err := p.Do(t.Context(), failing(&calls, tt.errs...))
			if calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
			}
			switch {
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			case tt.wantErr == nil && len(tt.errs) < tt.wantCalls && err != nil:
				t.Errorf("err = %v, want success", err)
			}
			if fmt.Sprint(rec.delays) != fmt.Sprint(tt.delays) {
				t.Errorf("delays = %v, want %v", rec.delays, tt.delays)
			}
		})
	}
}

func TestRetryPolicy_Backoff(t *testing.T) {
	tests := []struct {
		name   string
		policy providers.RetryPolicy
		rand   float64
		want   []time.Duration // for retries 1, 2, 3, ...
	}{
		{"defaults without jitter", providers.RetryPolicy{}, 0,
			[]time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}},
		{"defaults with maximal jitter", providers.RetryPolicy{}, 0.999999,
			[]time.Duration{1249999750 * time.Nanosecond, 2499999500 * time.Nanosecond, 4999999000 * time.Nanosecond}},
		{"half jitter", providers.RetryPolicy{}, 0.5,
			[]time.Duration{1125 * time.Millisecond, 2250 * time.Millisecond, 4500 * time.Millisecond, 9 * time.Second, 18 * time.Second, 33750 * time.Millisecond}},
		{"jitter disabled", providers.RetryPolicy{Jitter: -1}, 0.9, []time.Duration{time.Second, 2 * time.Second}},
		{"custom", providers.RetryPolicy{Initial: 100 * time.Millisecond, Max: 250 * time.Millisecond, Jitter: 1}, 0.5,
			[]time.Duration{150 * time.Millisecond, 300 * time.Millisecond, 375 * time.Millisecond}},
		{"initial above max", providers.RetryPolicy{Initial: time.Minute, Max: time.Second, Jitter: -1}, 0,
			[]time.Duration{time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.policy
			p.Rand = func() float64 { return tt.rand }
			for i, want := range tt.want {
				if got := p.Backoff(i + 1); got != want {
					t.Errorf("Backoff(%d) = %v, want %v", i+1, got, want)
				}
			}
		})
	}
	// Large retry numbers must not overflow.
	if got := (providers.RetryPolicy{Jitter: -1}).Backoff(1000); got != 30*time.Second {
		t.Errorf("Backoff(1000) = %v, want 30s", got)
	}
}

func TestRetryPolicy_JitterRange(t *testing.T) {
	p := providers.RetryPolicy{}
	for n := 1; n <= 3; n++ {
		base := time.Second << (n - 1)
		for range 200 {
			d := p.Backoff(n)
			if d < base || d >= base+base/4 {
				t.Fatalf("Backoff(%d) = %v, want in [%v, %v)", n, d, base, base+base/4)
			}
		}
	}
}

func TestRetryPolicy_OnRetry(t *testing.T) {
	type call struct {
		attempt int
		err     error
		delay   time.Duration
	}
	var got []call
	rec := &recorder{}
	p := providers.RetryPolicy{
		Sleep:   rec.sleep,
		Rand:    func() float64 { return 0 },
		OnRetry: func(a int, err error, d time.Duration) { got = append(got, call{a, err, d}) },
	}
	calls := 0
	var attempts []int
	err := p.Do(t.Context(), func(ctx context.Context) error {
		attempts = append(attempts, providers.Attempt(ctx))
		return failing(&calls, errServer, errServer)(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []call{{1, errServer, time.Second}, {2, errServer, 2 * time.Second}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("OnRetry calls = %v, want %v", got, want)
	}
	if fmt.Sprint(attempts) != "[1 2 3]" {
		t.Errorf("Attempt(ctx) per call = %v, want [1 2 3]", attempts)
	}
	if providers.Attempt(t.Context()) != 0 {
		t.Error("Attempt outside a retry loop is not 0")
	}
}

func TestRetry_Generic(t *testing.T) {
	rec := &recorder{}
	n := 0
	v, err := providers.Retry(t.Context(), providers.RetryPolicy{Sleep: rec.sleep}, func(context.Context) (string, error) {
		n++
		if n == 1 {
			return "", errServer
		}
		return "ok", nil
	})
	if v != "ok" || err != nil || n != 2 {
		t.Errorf("Retry = %q, %v after %d calls; want ok, nil after 2", v, err, n)
	}
}

// TestRetryPolicy_RealTimer uses the default timer in a synctest bubble: the
// waits follow the policy exactly, and cancelling the context ends a wait
// at once with an error that wraps context.Canceled.
func TestRetryPolicy_RealTimer(t *testing.T) {
	t.Run("waits", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			var at []time.Duration
			calls := 0
			p := providers.RetryPolicy{Rand: func() float64 { return 0 }}
			err := p.Do(t.Context(), func(ctx context.Context) error {
				at = append(at, time.Since(start))
				return failing(&calls, errServer, errServer, errServer)(ctx)
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second}
			if fmt.Sprint(at) != fmt.Sprint(want) {
				t.Errorf("calls at %v, want %v", at, want)
			}
		})
	})
	t.Run("cancel stops the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			start := time.Now()
			p := providers.RetryPolicy{}
			rate := &providers.Error{Kind: providers.KindRateLimited, RetryAfter: time.Hour}
			done := make(chan error)
			go func() {
				done <- p.Do(ctx, func(context.Context) error { return rate })
			}()
			synctest.Wait() // the retry loop is now waiting its hour
			cancel()
			err := <-done
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			if errors.Is(err, rate) {
				t.Errorf("err = %v still reads as the retryable failure", err)
			}
			if el := time.Since(start); el != 0 {
				t.Errorf("returned after %v, want at once", el)
			}
		})
	})
	t.Run("deadline stops the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
			defer cancel()
			calls := 0
			err := providers.RetryPolicy{Rand: func() float64 { return 0 }}.Do(ctx, failing(&calls, errServer, errServer, errServer))
			if !errors.Is(err, context.DeadlineExceeded) || calls != 2 {
				t.Errorf("err = %v after %d calls, want DeadlineExceeded after 2", err, calls)
			}
		})
	})
}
