package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzUsageRange reads arbitrary query strings as GET /v1/usage/history
// does: a range it accepts starts at a bucket boundary no later than now,
// holds now in its last bucket and at most maxUsageBuckets buckets; a
// range it refuses is a 400 naming bucket or since.
func FuzzUsageRange(f *testing.F) {
	for _, q := range []string{"", "bucket=1h", "bucket=1d", "bucket=1w", "since=2026-11-20T10:30:00Z",
		"bucket=1d&since=2026-11-20T10:30:00%2B05:30", "since=0001-01-01T00:00:00Z", "since=9999-12-31T23:59:59Z",
		"since=yesterday", "since=2026-02-30T00:00:00Z", "bucket=1h&bucket=1d", "since=2026-11-24T23:59:60Z"} {
		f.Add(q)
	}
	now := time.Date(2026, 11, 24, 21, 17, 3, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		r, err := parseUsageRange(q, now)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest ||
				!(strings.Contains(e.Message, "bucket") || strings.Contains(e.Message, "since")) {
				t.Fatalf("%q: %v, want a 400 naming bucket or since", raw, err)
			}
			return
		}
		if r.width != time.Hour && r.width != 24*time.Hour {
			t.Fatalf("%q: bucket width %v", raw, r.width)
		}
		if r.n < 1 || r.n > maxUsageBuckets {
			t.Fatalf("%q: %d buckets", raw, r.n)
		}
		if !r.start.Equal(r.start.Truncate(r.width)) || r.start.After(now) {
			t.Fatalf("%q: starts %v, not a bucket boundary before %v", raw, r.start, now)
		}
		last := r.start.Add(time.Duration(r.n-1) * r.width)
		if now.Before(last) || !now.Before(last.Add(r.width)) {
			t.Fatalf("%q: the last bucket starts %v, which does not hold now %v", raw, last, now)
		}
	})
}
