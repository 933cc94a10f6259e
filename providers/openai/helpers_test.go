package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/openai"
)

// reply is one scripted HTTP response.
type reply struct {
	status int
	header map[string]string
	body   string   // written as is
	events []string // SSE payloads, each sent as "data: <payload>\n\n" and flushed
	block  bool     // after the events, wait until the client goes away
}

// server is an httptest server on 127.0.0.1 that answers request n with
// replies[n] (the last reply repeats) and records the requests.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	paths   []string
	arrived chan int // receives n as request n arrives (buffered; extra arrivals are dropped)
}

func newServer(t *testing.T, replies ...reply) *server {
	t.Helper()
	s := &server{arrived: make(chan int, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		select {
		case s.arrived <- n:
		default:
		}
		rp := replies[min(n, len(replies)-1)]
		rp.write(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (rp reply) write(w http.ResponseWriter, r *http.Request) {
	for k, v := range rp.header {
		w.Header().Set(k, v)
	}
	if rp.events != nil {
		w.Header().Set("Content-Type", "text/event-stream")
	} else if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := rp.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	io.WriteString(w, rp.body)
	for _, e := range rp.events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		w.(http.Flusher).Flush()
	}
	if rp.block {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// requests returns how many requests the server received.
func (s *server) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// body decodes the n-th request body.
func (s *server) body(t *testing.T, n int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(s.bodies[n], &m); err != nil {
		t.Fatalf("request body %d: %v", n, err)
	}
	return m
}

// waits records the retry waits instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) get() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// testNow is the clock of the test providers.
var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// newProvider returns a provider for s whose retries record their waits
// (with no jitter) instead of sleeping.
func newProvider(t *testing.T, s *server, mod func(*openai.Options)) (*openai.Provider, *waits) {
	t.Helper()
	w := &waits{}
	opts := openai.Options{
		BaseURL: s.URL + "/v1",
		APIKey:  "sk-test-secret",
		Model:   "gpt-4o-mini",
		Retry:   &providers.RetryPolicy{Sleep: w.sleep, Rand: func() float64 { return 0 }},
		Now:     func() time.Time { return testNow },
	}
	if mod != nil {
		mod(&opts)
	}
	p, err := openai.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p, w
}

// apiErrorBody is an OpenAI error response body.
func apiErrorBody(message, typ, code string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "code": code}})
	return string(b)
}

// okBody is a complete reply with the given assistant text.
func okBody(text string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,` +
		`"message":{"role":"assistant","content":` + quote(text) + `},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// chunk is a streamed chunk with assistant text and an optional finish reason.
func chunk(text, finish string) string {
	fr := "null"
	if finish != "" {
		fr = quote(finish)
	}
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,` +
		`"delta":{"content":` + quote(text) + `},"finish_reason":` + fr + `}]}`
}

// drain reads s to its end, returning the text and the first error.
func drain(s providers.Stream) (string, error) {
	var b strings.Builder
	for c, err := range providers.Chunks(s) {
		if err != nil {
			return b.String(), err
		}
		b.WriteString(c.Text)
	}
	return b.String(), nil
}
