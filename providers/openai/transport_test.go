package openai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/openai"
)

// wireHeaders are the request headers go-openai sets or makes net/http set.
var wireHeaders = []string{"Content-Type", "Accept", "Cache-Control", "Connection", "Authorization", "Openai-Organization", "Content-Length", "Transfer-Encoding"}

// TestWire_SameAsGoOpenAI sends the same request through go-openai's client
// and through the provider, to the same server, and finds the same path,
// headers and body bytes, for a plain call and for a stream.
func TestWire_SameAsGoOpenAI(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "chat", true: "stream"}[stream], func(t *testing.T) {
			rp := reply{body: okBody("ok")}
			if stream {
				rp = reply{events: []string{chunk("ok", "stop"), "[DONE]"}}
			}
			s := newServer(t, rp)
			p, _ := newProvider(t, s, func(o *openai.Options) { o.Organization = "org-1" })

			cfg := oai.DefaultConfig("sk-test-secret")
			cfg.BaseURL = s.URL + "/v1"
			cfg.OrgID = "org-1"
			c := oai.NewClientWithConfig(cfg)
			oreq := oai.ChatCompletionRequest{Model: "test-model", Messages: []oai.ChatCompletionMessage{{Role: "user", Content: "hello"}}}
			req := messages.Request{Model: "test-model", Messages: []messages.Message{messages.UserText("hello")}}
			if stream {
				oreq.StreamOptions = &oai.StreamOptions{IncludeUsage: true}
				st, err := c.CreateChatCompletionStream(t.Context(), oreq)
				if err != nil {
					t.Fatal(err)
				}
				st.Close()
				ps, err := p.Stream(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := drain(ps); err != nil {
					t.Fatal(err)
				}
			} else {
				if _, err := c.CreateChatCompletion(t.Context(), oreq); err != nil {
					t.Fatal(err)
				}
				if _, err := p.Chat(t.Context(), req); err != nil {
					t.Fatal(err)
				}
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.bodies) != 2 {
				t.Fatalf("%d requests, want 2", len(s.bodies))
			}
			if !bytes.Equal(s.bodies[0], s.bodies[1]) {
				t.Errorf("body\n got: %s\nwant: %s", s.bodies[1], s.bodies[0])
			}
			if s.paths[0] != s.paths[1] {
				t.Errorf("path %q, want %q", s.paths[1], s.paths[0])
			}
			for _, k := range wireHeaders {
				if got, want := s.headers[1].Values(k), s.headers[0].Values(k); !cmp.Equal(got, want) {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// TestWire_ErrorBodiesAsGoOpenAI checks that an error response becomes the
// error go-openai returns for it, wrapped in the same *providers.Error.
func TestWire_ErrorBodiesAsGoOpenAI(t *testing.T) {
	tests := []struct {
		name     string
		rp       reply
		kind     providers.Kind
		apiError bool // an *oai.APIError, else an *oai.RequestError
		message  string
	}{
		{"OpenAI error object", reply{status: 400, body: apiErrorBody("bad field", "invalid_request_error", "")}, providers.KindBadRequest, true, "bad field"},
		{"rate limited", reply{status: 429, header: map[string]string{"Retry-After": "2"}, body: apiErrorBody("slow down", "rate_limit", "")}, providers.KindRateLimited, true, "slow down"},
		{"context length", reply{status: 400, body: apiErrorBody("This model's maximum context length is 8192 tokens", "invalid_request_error", "context_length_exceeded")}, providers.KindContextLength, true, ""},
		{"plain text body", reply{status: 502, body: "bad gateway"}, providers.KindServer, false, "bad gateway"},
		{"error member null", reply{status: 500, body: `{"error":null}`}, providers.KindServer, false, `{"error":null}`},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: "/stream"}[stream], func(t *testing.T) {
				s := newServer(t, tt.rp)
				p, _ := newProvider(t, s, func(o *openai.Options) { o.Retry = &providers.RetryPolicy{MaxAttempts: 1} })
				var err error
				if stream {
					_, err = p.Stream(t.Context(), hello)
				} else {
					_, err = p.Chat(t.Context(), hello)
				}
				pe, ok := errors.AsType[*providers.Error](err)
				if !ok {
					t.Fatalf("err = %v, want *providers.Error", err)
				}
				if pe.Kind != tt.kind || pe.Status != tt.rp.status {
					t.Errorf("kind %v status %d, want %v %d", pe.Kind, pe.Status, tt.kind, tt.rp.status)
				}
				if tt.message != "" && pe.Message != tt.message {
					t.Errorf("message %q, want %q", pe.Message, tt.message)
				}
				_, isAPI := errors.AsType[*oai.APIError](err)
				_, isReq := errors.AsType[*oai.RequestError](err)
				if isAPI != tt.apiError || isReq == tt.apiError {
					t.Errorf("APIError %v, RequestError %v; want APIError %v", isAPI, isReq, tt.apiError)
				}
				if tt.rp.status == 429 && pe.RetryAfter.Seconds() != 2 {
					t.Errorf("RetryAfter = %v, want 2s", pe.RetryAfter)
				}
			})
		}
	}
}

// TestWire_ConcurrentRequestsKeepTheirBodies runs many requests at once
// through the pooled body buffers and checks that every request reached
// the server with its own body.
func TestWire_ConcurrentRequestsKeepTheirBodies(t *testing.T) {
	s := newServer(t, reply{body: okBody("ok")})
	p, _ := newProvider(t, s, nil)
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			text := strings.Repeat(string(rune('a'+i%26)), 100+i*37)
			req := messages.Request{Messages: []messages.Message{messages.UserText(text)}}
			if _, err := p.Chat(t.Context(), req); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, b := range s.bodies {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("body %s: %v", b, err)
		}
		c := body.Messages[0].Content
		if len(c) < 100 || strings.Count(c, c[:1]) != len(c) {
			t.Fatalf("a body mixes requests: %q", c)
		}
		seen[c] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct bodies, want %d", len(seen), n)
	}
}
