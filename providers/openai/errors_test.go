package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/openai"
)

var hello = messages.Request{Messages: []messages.Message{messages.UserText("hello")}}

// errorCases are the misbehaving servers both Chat and Stream are tested
// against. ok, when set, is the reply that ends the failures.
var errorCases = []struct {
	name     string
	failures []reply
	wantKind providers.Kind // when the call fails
	wantOK   bool
	requests int
	status   int
	waits    []time.Duration
	message  string // in the error text, when it fails
}{
	{
		name:     "429 with Retry-After seconds then 200",
		failures: []reply{{status: 429, header: map[string]string{"Retry-After": "7"}, body: apiErrorBody("Rate limit reached", "requests", "rate_limit_exceeded")}},
		wantOK:   true, requests: 2, waits: []time.Duration{7 * time.Second},
	},
	{
		name: "429 with Retry-After date then 200",
		failures: []reply{{status: 429, header: map[string]string{
			"Retry-After": testNow.Add(20 * time.Second).Format(http.TimeFormat),
		}, body: apiErrorBody("Rate limit reached", "requests", "rate_limit_exceeded")}},
		wantOK: true, requests: 2, waits: []time.Duration{20 * time.Second},
	},
	{
		name:     "429 with retry-after-ms then 200",
		failures: []reply{{status: 429, header: map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, body: "{}"}},
		wantOK:   true, requests: 2, waits: []time.Duration{250 * time.Millisecond},
	},
	{
		name:     "429 with a huge Retry-After then 200",
		failures: []reply{{status: 429, header: map[string]string{"Retry-After": "100000"}, body: apiErrorBody("slow down", "requests", "rate_limit_exceeded")}},
		wantOK:   true, requests: 2, waits: []time.Duration{30 * time.Second},
	},
	{
		name:     "429 without Retry-After three times",
		failures: []reply{{status: 429, body: apiErrorBody("slow down", "requests", "rate_limit_exceeded")}},
		wantKind: providers.KindRateLimited, requests: 3, status: 429,
		waits: []time.Duration{time.Second, 2 * time.Second}, message: "slow down",
	},
	{
		name:     "500 then 503 then 200",
		failures: []reply{{status: 500, body: apiErrorBody("boom", "server_error", "")}, {status: 503, body: "oops"}},
		wantOK:   true, requests: 3, waits: []time.Duration{time.Second, 2 * time.Second},
	},
	{
		name:     "500 three times",
		failures: []reply{{status: 500, body: apiErrorBody("The server had an error", "server_error", "")}},
		wantKind: providers.KindServer, requests: 3, status: 500,
		waits: []time.Duration{time.Second, 2 * time.Second}, message: "The server had an error",
	},
	{
		name:     "502 with an HTML body three times",
		failures: []reply{{status: 502, header: map[string]string{"Content-Type": "text/html"}, body: "<html>Bad Gateway</html>"}},
		wantKind: providers.KindServer, requests: 3, status: 502,
		waits: []time.Duration{time.Second, 2 * time.Second}, message: "Bad Gateway",
	},
	{
		name:     "401",
		failures: []reply{{status: 401, body: apiErrorBody("Incorrect API key provided", "invalid_request_error", "invalid_api_key")}},
		wantKind: providers.KindAuthentication, requests: 1, status: 401, message: "Incorrect API key",
	},
	{
		name:     "403",
		failures: []reply{{status: 403, body: apiErrorBody("Country not supported", "invalid_request_error", "unsupported_country")}},
		wantKind: providers.KindAuthentication, requests: 1, status: 403,
	},
	{
		name:     "404 model not found",
		failures: []reply{{status: 404, body: apiErrorBody("The model `gpt-9` does not exist", "invalid_request_error", "model_not_found")}},
		wantKind: providers.KindNotFound, requests: 1, status: 404, message: "gpt-9",
	},
	{
		name:     "400 context_length_exceeded",
		failures: []reply{{status: 400, body: apiErrorBody("This model's maximum context length is 128000 tokens.", "invalid_request_error", "context_length_exceeded")}},
		wantKind: providers.KindContextLength, requests: 1, status: 400,
	},
	{
		name:     "400 context length without a code",
		failures: []reply{{status: 400, body: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","code":400}`}},
		wantKind: providers.KindContextLength, requests: 1, status: 400,
	},
	{
		name:     "400 other",
		failures: []reply{{status: 400, body: apiErrorBody("Invalid 'messages'", "invalid_request_error", "")}},
		wantKind: providers.KindBadRequest, requests: 1, status: 400,
	},
}

func TestChat_ErrorKinds(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			replies := tc.failures
			if tc.wantOK {
				replies = append(replies[:len(replies):len(replies)], reply{body: okBody("hi")})
			}
			s := newServer(t, replies...)
			p, w := newProvider(t, s, nil)
			resp, err := p.Chat(t.Context(), hello)
			if tc.wantOK {
				if err != nil || resp.Message.Text() != "hi" {
					t.Fatalf("Chat = %v, %v; want hi", resp, err)
				}
				return
			}
			checkError(t, err, tc.wantKind, tc.status, tc.message)
			if s.requests() != tc.requests {
				t.Errorf("requests = %d, want %d", s.requests(), tc.requests)
			}
			if fmt.Sprint(w.get()) != fmt.Sprint(tc.waits) {
				t.Errorf("waits = %v, want %v", w.get(), tc.waits)
			}
		})
	}
}

func TestStream_ErrorKindsWhenOpening(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			replies := tc.failures
			if tc.wantOK {
				replies = append(replies[:len(replies):len(replies)], reply{events: []string{chunk("hi", "stop"), "[DONE]"}})
			}
			s := newServer(t, replies...)
			p, w := newProvider(t, s, nil)
			st, err := p.Stream(t.Context(), hello)
			if tc.wantOK {
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				if text, err := drain(st); err != nil || text != "hi" {
					t.Fatalf("stream = %q, %v; want hi", text, err)
				}
			} else {
				checkError(t, err, tc.wantKind, tc.status, tc.message)
			}
			if s.requests() != tc.requests {
				t.Errorf("requests = %d, want %d", s.requests(), tc.requests)
			}
			if fmt.Sprint(w.get()) != fmt.Sprint(tc.waits) {
				t.Errorf("waits = %v, want %v", w.get(), tc.waits)
			}
		})
	}
}

// checkError asserts that err is a *providers.Error of kind, with status
// (when not 0) and message in its text (when not empty).
func checkError(t *testing.T, err error, kind providers.Kind, status int, message string) *providers.Error {
	t.Helper()
	pe, ok := errors.AsType[*providers.Error](err)
	if !ok {
		t.Fatalf("err = %v (%T), want a *providers.Error", err, err)
	}
	if pe.Kind != kind {
		t.Errorf("kind = %v, want %v (err %v)", pe.Kind, kind, err)
	}
	if status != 0 && pe.Status != status {
		t.Errorf("status = %d, want %d", pe.Status, status)
	}
	if pe.Provider != "openai" {
		t.Errorf("provider = %q, want openai", pe.Provider)
	}
	if message != "" && !strings.Contains(err.Error(), message) {
		t.Errorf("error %q does not contain %q", err, message)
	}
	if strings.Contains(err.Error(), "sk-test-secret") {
		t.Errorf("error %q contains the API key", err)
	}
	return pe
}

func TestChat_MalformedBody(t *testing.T) {
	s := newServer(t, reply{body: `{"id": "x", "choices": [`})
	p, _ := newProvider(t, s, nil)
	_, err := p.Chat(t.Context(), hello)
	checkError(t, err, providers.KindTimeout, 0, "")
	if s.requests() != 3 {
		t.Errorf("requests = %d, want 3 (a body cut short is retried)", s.requests())
	}

	s = newServer(t, reply{body: `{"id": "x", "choices": nonsense}`})
	p, _ = newProvider(t, s, nil)
	_, err = p.Chat(t.Context(), hello)
	checkError(t, err, providers.KindOther, 0, "")
	if s.requests() != 1 {
		t.Errorf("requests = %d, want 1", s.requests())
	}
}

func TestChat_ContextDeadline(t *testing.T) {
	s := newServer(t, reply{block: true})
	p, w := newProvider(t, s, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := p.Chat(ctx, hello)
	checkError(t, err, providers.KindTimeout, 0, "")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want errors.Is context.DeadlineExceeded", err)
	}
	if s.requests() != 1 || len(w.get()) != 0 {
		t.Errorf("requests = %d, waits = %v; want 1 request and no retry once the context is done", s.requests(), w.get())
	}
}

func TestChat_ProviderTimeoutIsRetried(t *testing.T) {
	s := newServer(t, reply{block: true}, reply{body: okBody("late but fine")})
	p, w := newProvider(t, s, func(o *openai.Options) { o.Timeout = 50 * time.Millisecond })
	resp, err := p.Chat(t.Context(), hello)
	if err != nil || resp.Message.Text() != "late but fine" {
		t.Fatalf("Chat = %v, %v", resp, err)
	}
	if s.requests() != 2 || len(w.get()) != 1 {
		t.Errorf("requests = %d, waits = %v; want 2 requests and 1 wait", s.requests(), w.get())
	}
}

func TestChat_Canceled(t *testing.T) {
	s := newServer(t, reply{block: true})
	p, _ := newProvider(t, s, nil)
	ctx, cancel := context.WithCancel(t.Context())
	// Cancel once the server has the request.
	go func() {
		<-s.arrived
		cancel()
	}()
	_, err := p.Chat(ctx, hello)
	checkError(t, err, providers.KindCanceled, 0, "")
	if !errors.Is(err, context.Canceled) || s.requests() != 1 {
		t.Errorf("err = %v after %d requests, want context.Canceled after 1", err, s.requests())
	}
}

func TestNew_InvalidOptions(t *testing.T) {
	for _, base := range []string{"ftp://x", "::", "http://", "https://user:pw@api.example.com/v1"} {
		if _, err := openai.New(openai.Options{BaseURL: base}); err == nil {
			t.Errorf("New(BaseURL %q) succeeded", base)
		} else if strings.Contains(err.Error(), "pw@") {
			t.Errorf("error %q leaks the URL's password", err)
		}
	}
	p, err := openai.New(openai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.BaseURL() != openai.DefaultBaseURL || p.Name() != "openai" || p.Model() != "" {
		t.Errorf("defaults: base %q name %q model %q", p.BaseURL(), p.Name(), p.Model())
	}
}

// TestErrors_EchoedKeyMasked has the endpoint echo the key it was sent and a
// credential of a known shape in its error body, for Chat, for a stream
// that fails when it opens and for one that fails mid-way, and checks that
// neither reaches the error while its kind and status stay.
func TestErrors_EchoedKeyMasked(t *testing.T) {
	const key = "custom-endpoint-key-0123456789"
	const shaped = "ghp_0123456789abcdefghijABCDEFGHIJklmnop"
	echo := func(status int) reply {
		return reply{status: status, body: `{"error":{"message":"key ` + key + ` rejected; see Authorization: Bearer ` + key + ` and ` + shaped + `","type":"invalid_request_error"}}`}
	}
	mid := reply{events: []string{`{"choices":[{"index":0,"delta":{"content":"x"}}]}`, `{"error":{"message":"lost ` + key + `"}}`}}
	for _, tc := range []struct {
		name   string
		reply  reply
		stream bool
		kind   providers.Kind
	}{
		{"chat 401", echo(http.StatusUnauthorized), false, providers.KindAuthentication},
		{"stream 401", echo(http.StatusUnauthorized), true, providers.KindAuthentication},
		{"stream 400", echo(http.StatusBadRequest), true, providers.KindBadRequest},
		{"stream mid-way", mid, true, providers.KindServer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.reply)
			p, err := openai.New(openai.Options{BaseURL: s.URL + "/v1", APIKey: key, Model: "m",
				Retry: &providers.RetryPolicy{MaxAttempts: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.stream {
				var st providers.Stream
				if st, err = p.Stream(t.Context(), hello); err == nil {
					for err == nil {
						_, err = st.Recv()
					}
					st.Close()
				}
			} else {
				_, err = p.Chat(t.Context(), hello)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), shaped) {
				t.Errorf("error holds a credential: %v", err)
			}
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Kind != tc.kind {
				t.Errorf("error %v: kind %v, want %v", err, providers.KindOf(err), tc.kind)
			} else if strings.Contains(pe.Message, key) {
				t.Errorf("Message holds the key: %q", pe.Message)
			}
		})
	}
}
