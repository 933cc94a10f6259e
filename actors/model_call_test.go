package actors_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/openai"
)

// statusReply is one canned HTTP error response.
type statusReply struct {
	status     int
	retryAfter string
}

// failingEndpoint is an OpenAI-compatible endpoint on 127.0.0.1 that
// answers request n with replies[n] (the last one repeats) and counts the
// requests.
type failingEndpoint struct {
	*httptest.Server
	mu       sync.Mutex
	requests int
}

func newFailingEndpoint(t *testing.T, replies ...statusReply) *failingEndpoint {
	t.Helper()
	e := &failingEndpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		e.mu.Lock()
		n := e.requests
		e.requests++
		e.mu.Unlock()
		rp := replies[min(n, len(replies)-1)]
		if rp.retryAfter != "" {
			w.Header().Set("Retry-After", rp.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rp.status)
		fmt.Fprintf(w, `{"error":{"message":"failure %d","type":"server_error"}}`, n+1)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *failingEndpoint) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.requests
}

// waitLog records the waits a retry policy asks for instead of sleeping.
type waitLog struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waitLog) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waitLog) get() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

func (w *waitLog) total() time.Duration {
	var sum time.Duration
	for _, d := range w.get() {
		sum += d
	}
	return sum
}

// runFailingTurn runs one turn on a runtime over p with the retry policy
// retry, its waits recorded in w, and returns the turn's error and the
// kind of the error event it published.
func runFailingTurn(t *testing.T, p providers.Provider, retry providers.RetryPolicy, w *waitLog) (error, string) {
	t.Helper()
	retry.Sleep, retry.Rand = w.sleep, func() float64 { return 0 }
	rt, err := actors.NewInMemory(actors.Config{Provider: p, Model: "gpt-test", Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	sess, err := rt.Open(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var kind string
	for ev, err := range sess.Stream(t.Context(), messages.UserText("hello")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case messages.ErrorEvent:
			kind = e.Kind
		case messages.TurnEnded:
			if e.Outcome != messages.OutcomeFailed {
				t.Fatalf("turn ended %v, want failed", e.Outcome)
			}
			return errors.New(e.Reason), kind
		}
	}
	t.Fatal("the turn did not end")
	return nil, ""
}

// TestModelCall_OneRetryLayer runs one turn through actors.New and
// openai.New against a server that fails every request (500, then 429 with
// Retry-After: 100000, then 503), and counts the requests it receives:
// exactly the runtime policy's attempts, however the provider was built,
// with the server's Retry-After waited at most MaxRetryAfter.
func TestModelCall_OneRetryLayer(t *testing.T) {
	failures := []statusReply{{status: 500}, {status: 429, retryAfter: "100000"}, {status: 503}}
	// Waits a provider-level layer would record: there must be none.
	providerWaits := &waitLog{}
	providerPolicy := &providers.RetryPolicy{MaxAttempts: 5, Sleep: providerWaits.sleep}
	tests := []struct {
		name     string
		provider func(t *testing.T, url string) providers.Provider
		retry    providers.RetryPolicy
		requests int
		waits    []time.Duration
	}{
		{"openai with its default options", func(t *testing.T, url string) providers.Provider {
			return newOpenAI(t, openai.Options{BaseURL: url})
		}, providers.RetryPolicy{}, 3, []time.Duration{time.Second, 30 * time.Second}},
		{"openai with a retry policy of its own", func(t *testing.T, url string) providers.Provider {
			return newOpenAI(t, openai.Options{BaseURL: url, Retry: providerPolicy})
		}, providers.RetryPolicy{}, 3, []time.Duration{time.Second, 30 * time.Second}},
		{"openai wrapped in WithRetry", func(t *testing.T, url string) providers.Provider {
			return providers.WithRetry(newOpenAI(t, openai.Options{BaseURL: url, Retry: providerPolicy}), *providerPolicy)
		}, providers.RetryPolicy{}, 3, []time.Duration{time.Second, 30 * time.Second}},
		{"five attempts and a 10 s Retry-After cap", func(t *testing.T, url string) providers.Provider {
			return newOpenAI(t, openai.Options{BaseURL: url})
		}, providers.RetryPolicy{MaxAttempts: 5, MaxRetryAfter: 10 * time.Second}, 5,
			[]time.Duration{time.Second, 10 * time.Second, 4 * time.Second, 8 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFailingEndpoint(t, failures...)
			w := &waitLog{}
			err, kind := runFailingTurn(t, tt.provider(t, srv.URL+"/v1"), tt.retry, w)
			if got := srv.count(); got != tt.requests {
				t.Errorf("requests = %d, want %d", got, tt.requests)
			}
			if diff := cmp.Diff(tt.waits, w.get(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("runtime waits (-want +got):\n%s", diff)
			}
			if got := providerWaits.get(); len(got) != 0 {
				t.Errorf("provider-level waits = %v, want none: the runtime is the only retry layer", got)
			}
			wantText := fmt.Sprintf("server error (status 503): failure %d", tt.requests)
			wantEnd := fmt.Sprintf("(gave up after %d attempts)", tt.requests)
			if kind != providers.KindServer.String() || !strings.Contains(err.Error(), wantText) || !strings.HasSuffix(err.Error(), wantEnd) {
				t.Errorf("error %q of kind %q, want %q ... %q of kind %q", err, kind, wantText, wantEnd, providers.KindServer)
			}
		})
	}
}

// TestModelCall_UnreachableEndpoint runs one turn against an endpoint where
// nothing listens: it fails as unavailable, naming the URL, after the
// policy's attempts and less than 5 s of waiting in all.
func TestModelCall_UnreachableEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String() + "/v1"
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	w := &waitLog{}
	var retries atomic.Int32
	err, kind := runFailingTurn(t, newOpenAI(t, openai.Options{BaseURL: base}),
		providers.RetryPolicy{OnRetry: func(int, error, time.Duration) { retries.Add(1) }}, w)
	want := "connection refused: nothing is listening at " + base
	if kind != providers.KindUnavailable.String() || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q of kind %q, want %q of kind unavailable", err, kind, want)
	}
	if n := int(retries.Load()); n != providers.DefaultMaxAttempts-1 || len(w.get()) != n {
		t.Errorf("OnRetry calls = %d, waits = %v; want %d", n, w.get(), providers.DefaultMaxAttempts-1)
	}
	if w.total() >= 5*time.Second {
		t.Errorf("total wait %v, want < 5s", w.total())
	}
}

func newOpenAI(t *testing.T, opts openai.Options) *openai.Provider {
	t.Helper()
	opts.Model = "gpt-test"
	p, err := openai.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestModelCall_AttemptTimeoutIsRetried runs one turn against an endpoint
// that never answers the first request: the attempt's own timeout
// (openai.Options.Timeout) is a retryable timeout, unlike the turn's
// deadline, so the runtime, the only retry layer, makes a second attempt,
// which succeeds.
func TestModelCall_AttemptTimeoutIsRetried(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if requests.Add(1) == 1 {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"late but fine"},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	w := &waitLog{}
	p := newOpenAI(t, openai.Options{BaseURL: srv.URL + "/v1", Timeout: 100 * time.Millisecond})
	rt, err := actors.NewInMemory(actors.Config{Provider: p, Model: "gpt-test",
		Retry: providers.RetryPolicy{Sleep: w.sleep, Rand: func() float64 { return 0 }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	sess, err := rt.Open(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.Submit(t.Context(), messages.UserText("hello"))
	if err != nil || res.Text != "late but fine" {
		t.Fatalf("Submit = %+v, %v; want the second attempt's reply", res, err)
	}
	if got := requests.Load(); got != 2 || len(w.get()) != 1 {
		t.Errorf("requests = %d, waits = %v; want 2 requests and 1 wait", got, w.get())
	}
}
