package openai_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/openai"
	"github.com/agcore/agcore/providers/providertest"
	"github.com/agcore/agcore/providers/scripted"
)

const mockKey = "sk-mock-test"

// startMock serves p on a free loopback port for the length of the test.
func startMock(t testing.TB, p providers.Provider) *mockllm.Server {
	t.Helper()
	srv, err := mockllm.Start(context.Background(), "127.0.0.1:0", mockllm.Config{Provider: p, APIKey: mockKey})
	if err != nil {
		t.Fatalf("mockllm.Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("mockllm Close: %v", err)
		}
	})
	return srv
}

// recordedSleep records retry waits instead of sleeping.
type recordedSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recordedSleep) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

func (r *recordedSleep) get() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waits...)
}

// mockClient is an openai Provider pointed at srv, retrying with the
// default policy but without waiting or jitter.
func mockClient(t testing.TB, srv *mockllm.Server, key string) (*openai.Provider, *recordedSleep) {
	t.Helper()
	rs := &recordedSleep{}
	p, err := openai.New(openai.Options{
		BaseURL: srv.URL(),
		APIKey:  key,
		Model:   "scripted",
		Retry:   &providers.RetryPolicy{Sleep: rs.sleep, Rand: func() float64 { return 0 }},
	})
	if err != nil {
		t.Fatalf("openai.New: %v", err)
	}
	return p, rs
}

func TestMockLLM_Conformance(t *testing.T) {
	providertest.Run(t, func(t *testing.T, s scripted.Script) providers.Provider {
		srv := startMock(t, scripted.MustNew(s, scripted.Options{}))
		p, err := openai.New(openai.Options{
			BaseURL: srv.URL(),
			APIKey:  mockKey,
			Model:   "scripted",
			Retry:   &providers.RetryPolicy{MaxAttempts: 1},
		})
		if err != nil {
			t.Fatalf("openai.New: %v", err)
		}
		return p
	})
}

// TestMockLLM_DemoOverHTTP plays the demo conversation through the openai
// provider and mockllm, streamed and not, and checks every reply against
// the scripted model answering directly: text, parallel tool calls, finish
// reasons and usage survive the trip.
func TestMockLLM_DemoOverHTTP(t *testing.T) {
	direct := scripted.MustNew(scripted.Demo(), scripted.Options{})
	srv := startMock(t, scripted.MustNew(scripted.Demo(), scripted.Options{}))
	p, _ := mockClient(t, srv, mockKey)
	tools := []messages.ToolDefinition{
		{Name: "list_dir", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "read_file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "write_file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`)},
	}
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "chat", true: "stream"}[streamed], func(t *testing.T) {
			conv := []messages.Message{messages.SystemText("You are a helpful agent."), messages.UserText("Summarise this project.")}
			var parallel bool
			for step := 0; ; step++ {
				if step == 10 {
					t.Fatal("the conversation did not end")
				}
				req := messages.Request{Model: "scripted", Messages: conv, Tools: tools}
				want, err := direct.Chat(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				var got *messages.Response
				if streamed {
					st, err := p.Stream(t.Context(), req)
					if err != nil {
						t.Fatalf("step %d: Stream: %v", step, err)
					}
					for _, err := range providers.Chunks(st) {
						if err != nil {
							t.Fatalf("step %d: Recv: %v", step, err)
						}
					}
					got = st.Response()
					st.Close()
				} else if got, err = p.Chat(t.Context(), req); err != nil {
					t.Fatalf("step %d: Chat: %v", step, err)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("step %d over HTTP (-direct +http):\n%s", step, diff)
				}
				if got.Usage.IsZero() {
					t.Fatalf("step %d: no usage", step)
				}
				conv = append(conv, got.Message)
				if len(got.Message.ToolCalls) == 0 {
					break
				}
				parallel = parallel || len(got.Message.ToolCalls) > 1
				for _, c := range got.Message.ToolCalls {
					conv = append(conv, messages.ToolResultMessage(c.ID, "result of "+c.Name))
				}
			}
			if !parallel {
				t.Error("the demo made no parallel tool calls")
			}
		})
	}
}

// TestMockLLM_InjectedFailures checks failures injected by the scripted
// model end to end: their kind, the number of requests made, and the retry
// waits (Retry-After honoured, backoff otherwise).
func TestMockLLM_InjectedFailures(t *testing.T) {
	rateLimited := scripted.Failure{Kind: scripted.FailRateLimit, RetryAfter: 3 * time.Second}
	tests := []struct {
		name     string
		script   scripted.Script
		key      string
		stream   bool
		kind     providers.Kind // 0 when the call succeeds
		status   int
		requests int // reaching the model
		waits    []time.Duration
	}{
		{
			name: "429 then 200",
			script: scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Turns: []scripted.Reply{
				{Fail: &rateLimited}, {Text: "ok"},
			}}}},
			requests: 2, waits: []time.Duration{3 * time.Second},
		},
		{
			name: "429 then 200, streamed",
			script: scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Turns: []scripted.Reply{
				{Fail: &rateLimited}, {Text: "ok"},
			}}}},
			stream: true, requests: 2, waits: []time.Duration{3 * time.Second},
		},
		{
			name: "500 twice then 200",
			script: scripted.Script{
				Rules:    []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}}},
				Failures: []scripted.Injection{{Calls: []int{1, 2}, Failure: scripted.Failure{Kind: scripted.FailServer}}},
			},
			requests: 3, waits: []time.Duration{time.Second, 2 * time.Second},
		},
		{
			name: "500 three times gives up",
			script: scripted.Script{
				Rules:    []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}}},
				Failures: []scripted.Injection{{Calls: []int{1, 2, 3}, Failure: scripted.Failure{Kind: scripted.FailServer}}},
			},
			stream: true, kind: providers.KindServer, status: 500, requests: 3,
			waits: []time.Duration{time.Second, 2 * time.Second},
		},
		{
			name:   "context length is not retried",
			script: scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Fail: &scripted.Failure{Kind: scripted.FailContextLength}}}}},
			kind:   providers.KindContextLength, status: 400, requests: 1,
		},
		{
			name:   "wrong API key is not retried",
			script: scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}}}},
			key:    "sk-wrong", kind: providers.KindAuthentication, status: 401, requests: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := scripted.MustNew(tt.script, scripted.Options{})
			srv := startMock(t, model)
			p, rs := mockClient(t, srv, cmpOrKey(tt.key))
			req := messages.Request{Messages: []messages.Message{messages.UserText("hi")}}
			var (
				resp *messages.Response
				err  error
			)
			if tt.stream {
				var st providers.Stream
				if st, err = p.Stream(t.Context(), req); err == nil {
					for _, rerr := range providers.Chunks(st) {
						err = rerr
					}
					resp = st.Response()
					st.Close()
				}
			} else {
				resp, err = p.Chat(t.Context(), req)
			}
			if tt.kind == 0 {
				if err != nil || resp.Message.Text() != "ok" {
					t.Fatalf("got %v, %v; want ok", resp, err)
				}
			} else {
				pe, ok := errors.AsType[*providers.Error](err)
				if !ok || pe.Kind != tt.kind || pe.Status != tt.status {
					t.Fatalf("err = %v, want kind %v status %d", err, tt.kind, tt.status)
				}
			}
			if n := model.Calls(); n != tt.requests {
				t.Errorf("requests reaching the model = %d, want %d", n, tt.requests)
			}
			if diff := cmp.Diff(tt.waits, rs.get(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("retry waits (-want +got):\n%s", diff)
			}
		})
	}
}

func cmpOrKey(key string) string {
	if key == "" {
		return mockKey
	}
	return key
}

// TestMockLLM_MidStreamFailure: once chunks have reached the caller, a
// failure ends the stream with its kind and is not retried.
func TestMockLLM_MidStreamFailure(t *testing.T) {
	model := scripted.MustNew(scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{
		Text: "a partial answer that breaks", Fail: &scripted.Failure{Kind: scripted.FailServer, Message: "backend crashed", AfterChunks: 2},
	}}}}, scripted.Options{})
	p, rs := mockClient(t, startMock(t, model), mockKey)
	st, err := p.Stream(t.Context(), messages.Request{Messages: []messages.Message{messages.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chunks := 0
	for _, err = range providers.Chunks(st) {
		if err != nil {
			break
		}
		chunks++
	}
	if providers.KindOf(err) != providers.KindServer || chunks != 2 {
		t.Errorf("after %d chunks: err = %v, want a server error after 2", chunks, err)
	}
	if model.Calls() != 1 || len(rs.get()) != 0 {
		t.Errorf("requests = %d, waits = %v; want one request and no retry", model.Calls(), rs.get())
	}
}
