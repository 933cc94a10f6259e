package search

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// checkResults holds the properties of decoded results: at most limit,
// http(s) URLs with a host, one-line titles that are never empty.
func checkResults(t *testing.T, rs []Result, err error, limit int) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrBadResponse) {
			t.Fatalf("error %v does not wrap ErrBadResponse", err)
		}
		return
	}
	if limit > 0 && len(rs) > limit {
		t.Fatalf("%d results, limit %d", len(rs), limit)
	}
	for _, r := range rs {
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("result URL %q accepted", r.URL)
		}
		if r.Title == "" || strings.ContainsAny(r.Title+r.Snippet, "\n\r") {
			t.Fatalf("result %+v: empty title or a line break", r)
		}
	}
}

func FuzzDecodeSearXNG(f *testing.F) {
	f.Add([]byte(searxngBody), 3)
	f.Add([]byte(`{"results":[]}`), 0)
	f.Add([]byte(`{"results":null}`), 1)
	f.Add([]byte(`{"results":[{"url":"https://a\nb","title":"<","content":"&#0;"}]}`), 5)
	f.Fuzz(func(t *testing.T, body []byte, limit int) {
		rs, err := DecodeSearXNG(body, limit)
		checkResults(t, rs, err, limit)
	})
}

func FuzzDecodeBrave(f *testing.F) {
	f.Add([]byte(braveBody), 2)
	f.Add([]byte(`{"type":"search"}`), 0)
	f.Add([]byte(`{"type":"search","web":{"results":[{"url":"http://x","title":"<b>&amp;</b>"}]}}`), 1)
	f.Add([]byte(`{"type":"ErrorResponse","error":{"detail":"x"}}`), 3)
	f.Fuzz(func(t *testing.T, body []byte, limit int) {
		rs, err := DecodeBrave(body, limit)
		checkResults(t, rs, err, limit)
	})
}
