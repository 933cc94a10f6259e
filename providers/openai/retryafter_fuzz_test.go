package openai

import (
	"net/http"
	"testing"
	"time"

	"github.com/agcore/agcore/providers"
)

// FuzzRetryAfterHeaders checks that whatever Retry-After-Ms and Retry-After
// headers a server sends, the wait read from them is never negative, and
// the default retry policy never waits longer than
// providers.DefaultMaxRetryAfter because of them.
func FuzzRetryAfterHeaders(f *testing.F) {
	f.Add("250", "1")
	f.Add("", "100000")
	f.Add("1e300", "")
	f.Add("-5", "Sat, 01 Mar 2025 12:00:07 GMT")
	f.Add("NaN", "+Inf")
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ms, seconds string) {
		h := http.Header{}
		h.Set("Retry-After-Ms", ms)
		h.Set("Retry-After", seconds)
		d := retryAfter(h.Get, now)
		if d < 0 {
			t.Fatalf("Retry-After-Ms %q, Retry-After %q: wait %v, negative", ms, seconds, d)
		}
		rate := &providers.Error{Kind: providers.KindRateLimited, Status: http.StatusTooManyRequests, RetryAfter: d}
		if w := (providers.RetryPolicy{Jitter: -1}).Delay(1, rate); w < 0 || w > providers.DefaultMaxRetryAfter {
			t.Fatalf("Retry-After-Ms %q, Retry-After %q: the policy waits %v, want at most %v", ms, seconds, w, providers.DefaultMaxRetryAfter)
		}
	})
}
