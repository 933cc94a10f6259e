package mockllm_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/scripted"
)

// testScript answers by keyword, with failures on demand.
func testScript() scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Exact: "hello"}, Reply: scripted.Reply{Text: "Hello there, friend!", Usage: &messages.Usage{PromptTokens: 9, CompletionTokens: 4, CachedPromptTokens: 2}}},
		{Match: scripted.Match{Exact: "tools"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			{Name: "read_file", Arguments: `{"path":"README.md"}`},
			{Name: "list_dir", Arguments: `{"path":"."}`},
		}}},
		{Match: scripted.Match{Exact: "429"}, Reply: scripted.Reply{Fail: &scripted.Failure{Kind: scripted.FailRateLimit, RetryAfter: 1500 * time.Millisecond}}},
		{Match: scripted.Match{Exact: "500"}, Reply: scripted.Reply{Fail: &scripted.Failure{Kind: scripted.FailServer}}},
		{Match: scripted.Match{Exact: "long"}, Reply: scripted.Reply{Fail: &scripted.Failure{Kind: scripted.FailContextLength}}},
		{Match: scripted.Match{Exact: "slow"}, Reply: scripted.Reply{Fail: &scripted.Failure{Kind: scripted.FailTimeout}}},
		{Match: scripted.Match{Exact: "cut"}, Reply: scripted.Reply{Text: "partial answer", Fail: &scripted.Failure{Kind: scripted.FailServer, Message: "backend crashed", AfterChunks: 2}}},
	}}
}

func newServer(t *testing.T, cfg mockllm.Config) *httptest.Server {
	t.Helper()
	if cfg.Provider == nil {
		cfg.Provider = scripted.MustNew(testScript(), scripted.Options{})
	}
	cfg.Now = func() time.Time { return time.Unix(1700000000, 0) }
	srv := httptest.NewServer(mockllm.NewHandler(cfg))
	t.Cleanup(srv.Close)
	return srv
}

func newClient(srv *httptest.Server) *oai.Client {
	cfg := oai.DefaultConfig("unused")
	cfg.BaseURL = srv.URL + "/v1"
	cfg.HTTPClient = srv.Client()
	return oai.NewClientWithConfig(cfg)
}

func userRequest(text string) oai.ChatCompletionRequest {
	return oai.ChatCompletionRequest{Model: "scripted", Messages: []oai.ChatCompletionMessage{{Role: "user", Content: text}}}
}

func post(t *testing.T, srv *httptest.Server, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func TestChat_GoOpenAI(t *testing.T) {
	c := newClient(newServer(t, mockllm.Config{}))
	resp, err := c.CreateChatCompletion(t.Context(), userRequest("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "Hello there, friend!" {
		t.Errorf("content = %q", got)
	}
	if resp.Object != "chat.completion" || resp.Created != 1700000000 || resp.Model != "scripted" || resp.ID == "" {
		t.Errorf("envelope = %q %d %q %q", resp.Object, resp.Created, resp.Model, resp.ID)
	}
	if resp.Choices[0].FinishReason != oai.FinishReasonStop {
		t.Errorf("finish = %q", resp.Choices[0].FinishReason)
	}
	u := resp.Usage
	if u.PromptTokens != 9 || u.CompletionTokens != 4 || u.TotalTokens != 13 || u.PromptTokensDetails == nil || u.PromptTokensDetails.CachedTokens != 2 {
		t.Errorf("usage = %+v", u)
	}

	resp, err = c.CreateChatCompletion(t.Context(), userRequest("tools"))
	if err != nil {
		t.Fatal(err)
	}
	want := []oai.ToolCall{
		{ID: "call_1_1", Type: "function", Function: oai.FunctionCall{Name: "read_file", Arguments: `{"path":"README.md"}`}},
		{ID: "call_1_2", Type: "function", Function: oai.FunctionCall{Name: "list_dir", Arguments: `{"path":"."}`}},
	}
	if diff := cmp.Diff(want, resp.Choices[0].Message.ToolCalls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if resp.Choices[0].FinishReason != oai.FinishReasonToolCalls {
		t.Errorf("finish = %q", resp.Choices[0].FinishReason)
	}
}

func TestStream_GoOpenAI(t *testing.T) {
	c := newClient(newServer(t, mockllm.Config{}))
	req := userRequest("tools")
	req.Stream = true
	req.StreamOptions = &oai.StreamOptions{IncludeUsage: true}
	st, err := c.CreateChatCompletionStream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	args := map[int]string{}
	names := map[int]string{}
	var finish oai.FinishReason
	var usage *oai.Usage
	events := 0
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		events++
		if ev.Usage != nil {
			usage = ev.Usage
		}
		for _, ch := range ev.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				names[*tc.Index] += tc.Function.Name
				args[*tc.Index] += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if diff := cmp.Diff(map[int]string{0: `{"path":"README.md"}`, 1: `{"path":"."}`}, args); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
	if names[0] != "read_file" || names[1] != "list_dir" {
		t.Errorf("names = %v", names)
	}
	if finish != oai.FinishReasonToolCalls || usage == nil || usage.TotalTokens == 0 || events < 6 {
		t.Errorf("finish %q, usage %+v, %d events", finish, usage, events)
	}
}

// readSSE returns the data payloads of an event stream.
func readSSE(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not a data line", line)
		}
		out = append(out, data)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStream_WireFormat(t *testing.T) {
	srv := newServer(t, mockllm.Config{Provider: scripted.MustNew(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "Hi", ToolCalls: []scripted.ToolCall{{ID: "call_a", Name: "f", Arguments: `{"k":1}`}},
			Usage: &messages.Usage{PromptTokens: 3, CompletionTokens: 2}}},
	}}, scripted.Options{ChunkSize: 4})})
	tests := []struct {
		name         string
		includeUsage bool
		want         []string
	}{
		{"without usage", false, []string{
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}`,
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"k\""}}]},"finish_reason":null}]}`,
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":null}]}`,
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`[DONE]`,
		}},
		{"with usage", true, []string{
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}],"usage":null}`,
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}],"usage":null}`,
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"k\""}}]},"finish_reason":null}],"usage":null}`,
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":null}],"usage":null}`,
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`,
			`{"id":"ID","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`,
			`[DONE]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"x"}]}`
			if tt.includeUsage {
				body = `{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
			}
			resp := post(t, srv, body)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			got := readSSE(t, resp.Body)
			var first struct{ ID string }
			if err := json.Unmarshal([]byte(got[0]), &first); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], first.ID, "ID")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStream_MidStreamError(t *testing.T) {
	srv := newServer(t, mockllm.Config{})
	resp := post(t, srv, `{"model":"m","stream":true,"messages":[{"role":"user","content":"cut"}]}`)
	got := readSSE(t, resp.Body)
	if len(got) != 3 {
		t.Fatalf("events = %q, want two chunks and an error", got)
	}
	want := `{"error":{"message":"scripted: backend crashed","type":"server_error","param":null,"code":null}}`
	if got[2] != want {
		t.Errorf("last event = %s, want %s", got[2], want)
	}

	// go-openai reports it as an error.
	req := userRequest("cut")
	req.Stream = true
	st, err := newClient(srv).CreateChatCompletionStream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for {
		_, err := st.Recv()
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "backend crashed") {
			t.Errorf("err = %v, want the server's error", err)
		}
		break
	}
}

func TestErrors(t *testing.T) {
	srv := newServer(t, mockllm.Config{Models: []string{"scripted", "gpt-x"}, MaxBodyBytes: 4096})
	msg := func(text string) string {
		return `{"model":"scripted","messages":[{"role":"user","content":"` + text + `"}]}`
	}
	tests := []struct {
		name       string
		body       string
		status     int
		typ, code  string
		retryAfter string
		contains   string
	}{
		{"rate limited", msg("429"), 429, "requests", "rate_limit_exceeded", "2", "rate limit"},
		{"server", msg("500"), 500, "server_error", "", "", "scripted: the server had an error"},
		{"context length", msg("long"), 400, "invalid_request_error", "context_length_exceeded", "", "context length"},
		{"timeout", msg("slow"), 408, "timeout", "", "", "timed out"},
		{"stream rate limited", `{"model":"scripted","stream":true,"messages":[{"role":"user","content":"429"}]}`, 429, "requests", "rate_limit_exceeded", "2", "rate limit"},
		{"no rule", msg("unknown"), 400, "invalid_request_error", "", "", `scripted: no rule matches the last user message \"unknown\"`},
		{"malformed JSON", `{"model":"scripted","messages":[`, 400, "invalid_request_error", "", "", "invalid JSON body"},
		{"trailing data", msg("hello") + `{}`, 400, "invalid_request_error", "", "", "unexpected data"},
		{"wrong type", `{"model":"scripted","messages":"hi"}`, 400, "invalid_request_error", "", "", "invalid JSON body"},
		{"no model", `{"messages":[{"role":"user","content":"hello"}]}`, 400, "invalid_request_error", "", "", "model"},
		{"no messages", `{"model":"scripted","messages":[]}`, 400, "invalid_request_error", "", "", "empty"},
		{"unanswered tool call", `{"model":"scripted","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"hello"}]}`, 400, "invalid_request_error", "", "", `tool call \"c\" has no tool result`},
		{"bad tool type", `{"model":"scripted","tools":[{"type":"retrieval"}],"messages":[{"role":"user","content":"hello"}]}`, 400, "invalid_request_error", "", "", "tools[0].type"},
		{"n", `{"model":"scripted","n":3,"messages":[{"role":"user","content":"hello"}]}`, 400, "invalid_request_error", "", "", "n=1"},
		{"unknown model", `{"model":"gpt-9","messages":[{"role":"user","content":"hello"}]}`, 404, "invalid_request_error", "model_not_found", "", "gpt-9"},
		{"too large", msg(strings.Repeat("x", 5000)), 413, "invalid_request_error", "request_too_large", "", "4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, srv, tt.body, "Content-Type", "application/json")
			if resp.StatusCode != tt.status {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if got := resp.Header.Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
			}
			raw, _ := io.ReadAll(resp.Body)
			var eb errorBody
			if err := json.Unmarshal(raw, &eb); err != nil {
				t.Fatalf("body %s: %v", raw, err)
			}
			code := ""
			if eb.Error.Code != nil {
				code = *eb.Error.Code
			}
			if eb.Error.Type != tt.typ || code != tt.code || !strings.Contains(string(raw), tt.contains) {
				t.Errorf("body = %s, want type %q, code %q, containing %q", raw, tt.typ, tt.code, tt.contains)
			}
		})
	}
}

func TestRoutes(t *testing.T) {
	srv := newServer(t, mockllm.Config{Models: []string{"a", "b"}, APIKey: "sk-test"})
	auth := "Bearer sk-test"
	tests := []struct {
		method, path, auth string
		status             int
		contains           string
	}{
		{"GET", "/v1/models", auth, 200, `{"object":"list","data":[{"id":"a","object":"model","created":1700000000,"owned_by":"agcore"},{"id":"b","object":"model","created":1700000000,"owned_by":"agcore"}]}`},
		{"GET", "/v1/models/b", auth, 200, `{"id":"b","object":"model"`},
		{"GET", "/v1/models/c", auth, 404, "model_not_found"},
		{"GET", "/v1/models", "Bearer wrong", 401, "invalid_api_key"},
		{"GET", "/v1/models", "", 401, "Incorrect API key"},
		{"GET", "/v1/chat/completions", auth, 405, "method_not_supported"},
		{"DELETE", "/v1/models", auth, 405, "method_not_supported"},
		{"GET", "/v1/embeddings", auth, 404, "Invalid URL (GET /v1/embeddings)"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.auth, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(raw), tt.contains) {
				t.Errorf("got %d %s, want %d containing %s", resp.StatusCode, raw, tt.status, tt.contains)
			}
		})
	}
}

func TestNewHandler_NilProvider(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewHandler with a nil provider did not panic")
		}
	}()
	mockllm.NewHandler(mockllm.Config{})
}
