package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/agcore/agcore/memory"
)

// FuzzSessionOfPath checks the router's reading of a request path against
// the API's own routing: when sessionOfPath names a session, the API's
// session routes would serve the path for that same session id, which the
// journal accepts; when the API's routes would serve a canonical path for
// a valid session id, sessionOfPath names it.
func FuzzSessionOfPath(f *testing.F) {
	for _, s := range []string{
		"/v1/sessions/s-1", "/v1/sessions/s-1/turns", "/v1/sessions/s%2F1/turns", "/v1/sessions/a%20b/approvals/c-1",
		"/v1/sessions/", "/v1/sessions", "/v1/sessions/../tools", "/v1/sessions/s-1/", "/v1/sessions//turns",
		"/v1/sessions/%zz", "/v1/sessions/%00", "/v1/tools", "/v1/sessions/./x",
	} {
		f.Add(s)
	}
	// The API's session routes, as ServeMux matches them.
	mux := http.NewServeMux()
	var matched string
	mux.HandleFunc("/v1/sessions/{id}", func(_ http.ResponseWriter, r *http.Request) { matched = r.PathValue("id") })
	mux.HandleFunc("/v1/sessions/{id}/{rest...}", func(_ http.ResponseWriter, r *http.Request) { matched = r.PathValue("id") })
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.ParseRequestURI(raw)
		if err != nil || u.RawQuery != "" || u.Host != "" || u.Opaque != "" {
			return
		}
		id, ok := sessionOfPath(u)
		matched = ""
		muxID := "\x00unmatched"
		mux.ServeHTTP(httptest.NewRecorder(), &http.Request{Method: http.MethodGet, URL: u})
		if matched != "" {
			muxID = matched
		}
		canonical := path.Clean(u.Path) == u.Path && strings.HasPrefix(u.Path, "/v1/sessions/")
		if ok {
			if err := memory.ValidateSession(id); err != nil {
				t.Fatalf("sessionOfPath(%q) = %q, which the journal refuses: %v", raw, id, err)
			}
			if !canonical {
				t.Fatalf("sessionOfPath(%q) = %q for a path that is not canonical", raw, id)
			}
			if muxID != id {
				t.Fatalf("sessionOfPath(%q) = %q, but the API's routes read %q", raw, id, muxID)
			}
			return
		}
		if canonical && muxID != "\x00unmatched" && memory.ValidateSession(muxID) == nil {
			t.Fatalf("sessionOfPath(%q) names no session, but the API's routes serve it for session %q", raw, muxID)
		}
	})
}
