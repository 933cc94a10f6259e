package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/toolsys"
)

const testKey = "BSA-test-key-0123456789abcdef"

// fake is a search service on 127.0.0.1 that records its requests.
type fake struct {
	*httptest.Server
	hits atomic.Int64
	last atomic.Pointer[http.Request]
}

func newFake(t *testing.T, h http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		f.last.Store(r.Clone(context.Background()))
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

const searxngBody = `{"query":"go actors","number_of_results":3,"results":[
 {"url":"https://go.dev/doc","title":"The <b>Go</b> docs","content":"Docs &amp; more\nlines","engine":"ddg"},
 {"url":"javascript:alert(1)","title":"bad","content":"x"},
 {"url":"https://protoactor.io","title":"","content":"Proto.Actor"},
 {"url":"https://third.example","title":"Third","content":"3"}]}`

const braveBody = `{"type":"search","query":{"original":"go actors"},"web":{"type":"search","results":[
 {"title":"The <strong>Go</strong> programming language","url":"https://go.dev/","description":"Go is an <strong>open source</strong> language."},
 {"title":"Proto.Actor","url":"https://proto.actor/","description":""}]}}`

// registry returns a registry with web_search over b, masking testKey.
func registry(t *testing.T, b Backend, log zerolog.Logger) *toolsys.Registry {
	t.Helper()
	rd := redact.New()
	rd.Add(testKey, "")
	reg := toolsys.NewRegistry(toolsys.Config{Redactor: rd, Logger: log})
	ws, err := New(ToolConfig{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(ws.Tool())
	return reg
}

func search(t *testing.T, reg *toolsys.Registry, args string, log zerolog.Logger) toolsys.Result {
	t.Helper()
	res, err := reg.Call(context.Background(), ToolName, json.RawMessage(args), &toolsys.Context{Logger: log})
	if err != nil {
		t.Fatalf("web_search(%s): %v", args, err)
	}
	return res
}

func TestSearXNG(t *testing.T) {
	f := newFake(t, reply(200, searxngBody))
	b, err := NewSearXNG(SearXNGConfig{URL: f.URL + "/searx/", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	res := search(t, registry(t, b, zerolog.Nop()), `{"query":"  go actors ","count":2}`, zerolog.Nop())
	want := "1. The Go docs\n   https://go.dev/doc\n   Docs & more lines\n2. https://protoactor.io\n   https://protoactor.io\n   Proto.Actor\n"
	if res.IsError || res.Content != want {
		t.Errorf("content =\n%s\nwant\n%s", res.Content, want)
	}
	r := f.last.Load()
	if r.Method != http.MethodGet || r.URL.Path != "/searx/search" {
		t.Errorf("request %s %s", r.Method, r.URL.Path)
	}
	wantQuery := url.Values{"q": {"go actors"}, "format": {"json"}, "pageno": {"1"}, "language": {"en"}}
	if got := r.URL.Query(); !equalValues(got, wantQuery) {
		t.Errorf("query sent = %v, want exactly %v", got, wantQuery)
	}
	checkHeaders(t, r)
}

// checkHeaders fails unless the request carries only the HTTP client's
// own headers and, for Brave, the key header.
func checkHeaders(t *testing.T, r *http.Request) {
	t.Helper()
	allowed := map[string]bool{"User-Agent": true, "Accept": true, "Accept-Encoding": true, "X-Subscription-Token": true}
	for k := range r.Header {
		if !allowed[k] {
			t.Errorf("header %s sent: %v", k, r.Header)
		}
	}
}

func equalValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestBrave(t *testing.T) {
	f := newFake(t, reply(200, braveBody))
	b, err := NewBrave(BraveConfig{APIKey: testKey, URL: f.URL + "/res/v1/web/search", Country: "de"})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := zerolog.New(&logs).Level(zerolog.DebugLevel)
	res := search(t, registry(t, b, log), `{"query":"go actors"}`, log)
	want := "1. The Go programming language\n   https://go.dev/\n   Go is an open source language.\n2. Proto.Actor\n   https://proto.actor/\n"
	if res.IsError || res.Content != want {
		t.Errorf("content =\n%s\nwant\n%s", res.Content, want)
	}
	r := f.last.Load()
	if got := r.Header.Get("X-Subscription-Token"); got != testKey {
		t.Errorf("X-Subscription-Token = %q", got)
	}
	checkHeaders(t, r)
	wantQuery := url.Values{"q": {"go actors"}, "count": {"5"}, "country": {"de"}}
	if got := r.URL.Query(); !equalValues(got, wantQuery) {
		t.Errorf("query sent = %v, want exactly %v", got, wantQuery)
	}
	if logs.Len() == 0 {
		t.Fatal("no debug log written: the check below would prove nothing")
	}
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("the API key reached the log: %s", logs.String())
	}
}

func TestBackend_Failures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		brave   bool
		handler http.HandlerFunc
		want    string // in the error result
		is      error
	}{
		{"searxng server error", false, reply(500, "<html>boom</html>"), "searxng: the search service answered 500 Internal Server Error: <html>boom</html>", nil},
		{"searxng json disabled", false, reply(403, "Forbidden"), "enable the json format", nil},
		{"searxng garbage", false, reply(200, "<html>not json</html>"), "searxng: invalid character", ErrBadResponse},
		{"searxng no results array", false, reply(200, `{"query":"x"}`), "no results array", ErrBadResponse},
		{"searxng results of the wrong type", false, reply(200, `{"results":{"a":1}}`), "cannot unmarshal", ErrBadResponse},
		{"brave unauthorized", true, reply(401, `{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid."}}`),
			"brave: the search service answered 401 Unauthorized: SUBSCRIPTION_TOKEN_INVALID: The provided subscription token is invalid.", nil},
		{"brave rate limited", true, reply(429, `{"error":{"detail":"Rate limit"}}`), "429 Too Many Requests: Rate limit", nil},
		{"brave echoes the key", true, reply(400, `{"error":{"detail":"bad token `+testKey+`"}}`), "bad token", nil},
		{"brave garbage", true, reply(200, `[1,2,3]`), "brave: json: cannot unmarshal array", ErrBadResponse},
		{"brave wrong type", true, reply(200, `{"type":"ErrorResponse"}`), `of type "ErrorResponse"`, ErrBadResponse},
		{"too large", true, reply(200, `{"type":"search","x":"`+strings.Repeat("a", MaxResponseBytes)+`"}`), "more than", ErrResponseTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.handler)
			var b Backend
			var err error
			if tc.brave {
				b, err = NewBrave(BraveConfig{APIKey: testKey, URL: f.URL})
			} else {
				b, err = NewSearXNG(SearXNGConfig{URL: f.URL})
			}
			if err != nil {
				t.Fatal(err)
			}
			res := search(t, registry(t, b, zerolog.Nop()), `{"query":"q"}`, zerolog.Nop())
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("result = %+v, want an error result with %q", res, tc.want)
			}
			if strings.Contains(res.Content, testKey) {
				t.Errorf("the API key reached the result: %s", res.Content)
			}
			if tc.is != nil {
				if _, err := b.Search(context.Background(), Query{Text: "q", Count: 5}); !errors.Is(err, tc.is) {
					t.Errorf("Search error = %v, want %v", err, tc.is)
				}
			}
		})
	}
}

func TestBackend_RedirectToAnotherHostRefused(t *testing.T) {
	other := newFake(t, reply(200, searxngBody))
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/search?"+r.URL.RawQuery, http.StatusFound)
	})
	b, err := NewSearXNG(SearXNGConfig{URL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Search(context.Background(), Query{Text: "q", Count: 3})
	if !errors.Is(err, ErrRedirect) {
		t.Errorf("err = %v, want ErrRedirect", err)
	}
	if n := other.hits.Load(); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
}

func TestBackend_Cancelled(t *testing.T) {
	started := make(chan struct{}, 1)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
	})
	b, err := NewSearXNG(SearXNGConfig{URL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := New(ToolConfig{Backend: b})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err = ws.Tool().Execute(ctx, json.RawMessage(`{"query":"q"}`), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want a Go error wrapping context.Canceled (the turn was cancelled, not the search)", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"searxng without URL", second(NewSearXNG(SearXNGConfig{})), "want an absolute http or https URL"},
		{"searxng ftp", second(NewSearXNG(SearXNGConfig{URL: "ftp://x"})), "want an absolute http or https URL"},
		{"searxng credentials", second(NewSearXNG(SearXNGConfig{URL: "https://u:p@x"})), "credentials in the URL"},
		{"brave without key", second(NewBrave(BraveConfig{})), "API key is empty"},
		{"tool without backend", second(New(ToolConfig{})), "Backend is nil"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestWebSearch_Arguments(t *testing.T) {
	f := newFake(t, reply(200, searxngBody))
	b, _ := NewSearXNG(SearXNGConfig{URL: f.URL})
	reg := registry(t, b, zerolog.Nop())
	for _, args := range []string{`{"query":"   "}`, `{"query":""}`, `{}`, `{"query":"x","count":21}`, `{"query":"` + strings.Repeat("a", 401) + `"}`} {
		if res := search(t, reg, args, zerolog.Nop()); !res.IsError {
			t.Errorf("web_search(%.60s) = %+v, want refused", args, res)
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("refused calls sent %d requests", n)
	}
}

// TestBackend_Timeout: a service that never answers ends at the backend's
// timeout as an error result, while the call's own context is still live.
func TestBackend_Timeout(t *testing.T) {
	release := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	b, err := NewSearXNG(SearXNGConfig{URL: f.URL, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Search(context.Background(), Query{Text: "q", Count: 1}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Search = %v, want context.DeadlineExceeded", err)
	}
	res := search(t, registry(t, b, zerolog.Nop()), `{"query":"q"}`, zerolog.Nop())
	if !res.IsError || !strings.Contains(res.Content, "web search failed: searxng") {
		t.Errorf("result = %+v, want an error result", res)
	}
}
