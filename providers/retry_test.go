package providers_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
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
		{"two failures then success", providers.RetryPolicy{},
			[]error{errServer, errServer}, 3, nil,
			[]time.Duration{1 * time.Second, 2 * time.Second}},
		{"three failures exhaust the default of 3 attempts", providers.RetryPolicy{},
			[]error{errServer, errServer, errServer}, 3, errServer,
			[]time.Duration{1 * time.Second, 2 * time.Second}},
		{"not retryable", providers.RetryPolicy{}, []error{errAuth}, 1, errAuth, nil},
		{"plain error not retryable", providers.RetryPolicy{}, []error{errors.New("boom")}, 1, nil, nil},
		{"retry-after wins", providers.RetryPolicy{}, []error{rate}, 2, nil, []time.Duration{7 * time.Second}},
		{"one attempt disables retrying", providers.RetryPolicy{MaxAttempts: 1}, []error{errServer}, 1, errServer, nil},
		{"negative attempts mean one", providers.RetryPolicy{MaxAttempts: -4}, []error{errServer}, 1, errServer, nil},
		{"cap", providers.RetryPolicy{MaxAttempts: 8, Initial: 4 * time.Second, Max: 10 * time.Second},
			[]error{errServer, errServer, errServer, errServer}, 5, nil,
			[]time.Duration{4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}},
		{"wrapped retryable", providers.RetryPolicy{MaxAttempts: 2},
			[]error{fmt.Errorf("ctx: %w", context.DeadlineExceeded)}, 2, nil, []time.Duration{time.Second}},
		{"custom classifier", providers.RetryPolicy{Retryable: func(err error) bool { return errors.Is(err, errAuth) }},
			[]error{errAuth, errServer}, 2, errServer, []time.Duration{time.Second}},
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
				return failing(&calls, errServer, errServer)(ctx)
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []time.Duration{0, 1 * time.Second, 3 * time.Second}
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
	t.Run("a wait past the deadline fails at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
			defer cancel()
			start := time.Now()
			calls := 0
			err := providers.RetryPolicy{Rand: func() float64 { return 0 }}.Do(ctx, failing(&calls, errServer, errServer, errServer))
			if !errors.Is(err, providers.ErrRetryPastDeadline) || !errors.Is(err, errServer) || calls != 2 {
				t.Errorf("err = %v after %d calls, want the server error and ErrRetryPastDeadline after 2", err, calls)
			}
			// The first wait (1 s) fits; the second (2 s) would not, so
			// the call fails when the second attempt does.
			if el := time.Since(start); el != time.Second {
				t.Errorf("returned after %v, want 1s", el)
			}
		})
	})
}

// TestRetryPolicy_RetryAfterCap checks that a server's Retry-After is
// waited at most MaxRetryAfter, while the error keeps what the server said.
func TestRetryPolicy_RetryAfterCap(t *testing.T) {
	tests := []struct {
		name       string
		policy     providers.RetryPolicy
		retryAfter time.Duration
		want       time.Duration
	}{
		{"huge value capped by the default", providers.RetryPolicy{}, 100000 * time.Second, 30 * time.Second},
		{"below the default cap", providers.RetryPolicy{}, 7 * time.Second, 7 * time.Second},
		{"custom cap", providers.RetryPolicy{MaxRetryAfter: 5 * time.Second}, 7 * time.Second, 5 * time.Second},
		{"custom cap above the value", providers.RetryPolicy{MaxRetryAfter: time.Minute}, 45 * time.Second, 45 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rate := &providers.Error{Kind: providers.KindRateLimited, Status: 429, RetryAfter: tt.retryAfter}
			rec := &recorder{}
			p := tt.policy
			p.Sleep, p.MaxAttempts = rec.sleep, 2
			calls := 0
			err := p.Do(t.Context(), failing(&calls, rate, rate))
			if fmt.Sprint(rec.delays) != fmt.Sprint([]time.Duration{tt.want}) {
				t.Errorf("waits = %v, want [%v]", rec.delays, tt.want)
			}
			if calls != 2 || providers.RetryAfterOf(err) != tt.retryAfter {
				t.Errorf("calls = %d, err = %v; want 2 calls and the server's Retry-After %v in the error", calls, err, tt.retryAfter)
			}
		})
	}
}

// TestRetryPolicy_PastDeadline checks that a retry whose wait would end
// after the context's deadline is not attempted: the call fails at once
// with the classified error, without sleeping.
func TestRetryPolicy_PastDeadline(t *testing.T) {
	rate := &providers.Error{Kind: providers.KindRateLimited, Status: 429, RetryAfter: 100000 * time.Second, Message: "slow down"}
	tests := []struct {
		name     string
		err      error
		timeout  time.Duration
		wantKind providers.Kind
		wantText []string
	}{
		{"capped Retry-After past the deadline", rate, 10 * time.Second, providers.KindRateLimited,
			[]string{"rate limited (status 429, retry after 27h46m40s): slow down", "not retried", "30s", "deadline"}},
		{"backoff past the deadline", errServer, 500 * time.Millisecond, providers.KindServer,
			[]string{"server error (status 500)", "not retried", "1s", "deadline"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
			defer cancel()
			rec := &recorder{}
			retried := 0
			p := providers.RetryPolicy{Sleep: rec.sleep, Rand: func() float64 { return 0 },
				OnRetry: func(int, error, time.Duration) { retried++ }}
			calls := 0
			err := p.Do(ctx, failing(&calls, tt.err, tt.err, tt.err))
			if calls != 1 || len(rec.delays) != 0 || retried != 0 {
				t.Errorf("calls = %d, waits = %v, OnRetry = %d; want 1 call, no wait, no OnRetry", calls, rec.delays, retried)
			}
			if !errors.Is(err, providers.ErrRetryPastDeadline) || !errors.Is(err, tt.err) || providers.KindOf(err) != tt.wantKind {
				t.Fatalf("err = %v (kind %v), want %v wrapped with ErrRetryPastDeadline", err, providers.KindOf(err), tt.wantKind)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v reads as a deadline, but the deadline has not passed", err)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
			if tt.err == rate && providers.RetryAfterOf(err) != 100000*time.Second {
				t.Errorf("RetryAfterOf = %v, want the server's 100000s", providers.RetryAfterOf(err))
			}
		})
	}
}

// TestRetryPolicy_Unavailable checks that an endpoint that cannot be
// reached is retried with short waits: with the default attempts, or ten
// of them, and the largest jitter, it fails in well under 5 s of waiting.
func TestRetryPolicy_Unavailable(t *testing.T) {
	unavailable := &providers.Error{Kind: providers.KindUnavailable, Message: "connection refused: nothing is listening at http://127.0.0.1:1/v1"}
	for _, attempts := range []int{0, 10} {
		t.Run(fmt.Sprintf("MaxAttempts=%d", attempts), func(t *testing.T) {
			rec := &recorder{}
			p := providers.RetryPolicy{MaxAttempts: attempts, Sleep: rec.sleep, Rand: func() float64 { return 0.999999 }}
			calls := 0
			errs := make([]error, 20)
			for i := range errs {
				errs[i] = unavailable
			}
			err := p.Do(t.Context(), failing(&calls, errs...))
			want := cmp.Or(attempts, providers.DefaultMaxAttempts)
			if calls != want || len(rec.delays) != want-1 {
				t.Errorf("calls = %d, waits = %v; want %d calls", calls, rec.delays, want)
			}
			var total time.Duration
			for _, d := range rec.delays {
				total += d
			}
			if total >= 5*time.Second {
				t.Errorf("total wait %v for an unreachable endpoint, want < 5s (waits %v)", total, rec.delays)
			}
			if providers.KindOf(err) != providers.KindUnavailable || !strings.Contains(err.Error(), "nothing is listening at http://127.0.0.1:1/v1") {
				t.Errorf("err = %v, want the unavailable error naming the endpoint", err)
			}
		})
	}
}

// TestRetry_GaveUp checks that an error returned after the attempts are
// used up says how many were made, and still unwraps to the last failure.
func TestRetry_GaveUp(t *testing.T) {
	calls := 0
	err := providers.RetryPolicy{Sleep: (&recorder{}).sleep}.Do(t.Context(), failing(&calls, errServer, errServer, errServer))
	if !errors.Is(err, errServer) || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("err = %v, want the server error and \"gave up after 3 attempts\"", err)
	}
	calls = 0
	err = providers.RetryPolicy{MaxAttempts: 1}.Do(t.Context(), failing(&calls, errServer))
	if err != errServer {
		t.Errorf("err = %v with a single attempt, want the failure as it is", err)
	}
}

// FuzzRetryWait checks that whatever Retry-After a server sends, and
// whatever cap and deadline apply, a retry never waits longer than the cap
// nor so long that the wait would pass the deadline: either it waits within
// both, or the call fails at once marked ErrRetryPastDeadline, still
// reading as rate limited with the server's value.
func FuzzRetryWait(f *testing.F) {
	f.Add("100000", int64(0), int64(0))
	f.Add("100000", int64(0), int64(10_000))
	f.Add("7", int64(5_000), int64(60_000))
	f.Add("Sat, 01 Mar 2025 12:00:07 GMT", int64(-1), int64(3_000))
	f.Add("", int64(0), int64(500))
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	const bound = int64(1) << 40 // milliseconds, about 35 years: no overflow
	f.Fuzz(func(t *testing.T, header string, capMs, leftMs int64) {
		ra, _ := providers.ParseRetryAfter(header, now)
		rate := &providers.Error{Kind: providers.KindRateLimited, Status: 429, RetryAfter: ra}
		ctx := t.Context()
		var left time.Duration
		if leftMs > 0 {
			left = time.Duration(min(leftMs, bound)) * time.Millisecond
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, left)
			defer cancel()
		}
		ceiling := time.Duration(max(min(capMs, bound), -bound)) * time.Millisecond
		rec := &recorder{}
		p := providers.RetryPolicy{MaxAttempts: 2, MaxRetryAfter: ceiling, Sleep: rec.sleep}
		err := p.Do(ctx, func(context.Context) error { return rate })
		limit := ceiling
		if limit <= 0 {
			limit = providers.DefaultMaxRetryAfter
		}
		for _, d := range rec.delays {
			if d < 0 || ra > 0 && d > limit {
				t.Fatalf("Retry-After %v with cap %v: waited %v", ra, ceiling, d)
			}
			if left > 0 && d >= left {
				t.Fatalf("waited %v with %v left before the deadline", d, left)
			}
		}
		// A deadline that passed before the decision needs no mark: the
		// call is simply not retried.
		if len(rec.delays) != 1 && !errors.Is(err, providers.ErrRetryPastDeadline) && ctx.Err() == nil {
			t.Fatalf("waits %v, err %v: want one wait, or ErrRetryPastDeadline", rec.delays, err)
		}
		if providers.KindOf(err) != providers.KindRateLimited || providers.RetryAfterOf(err) != ra {
			t.Fatalf("err = %v, want rate limited with the server's Retry-After %v", err, ra)
		}
	})
}
