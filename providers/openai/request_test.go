package openai_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/openai"
)

func ptr[T any](v T) *T { return &v }

// jsonOf decodes s into a generic value, for comparison with a decoded body.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRequestMapping(t *testing.T) {
	weather := messages.ToolDefinition{
		Name: "get_weather", Description: "Weather in a city",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`),
		Strict:     true,
	}
	conversation := []messages.Message{
		messages.SystemText("be brief"),
		messages.DeveloperText("use metric units"),
		{Role: messages.RoleUser, Name: "ana", Content: messages.Content{
			messages.TextPart("what is this?"),
			messages.ImagePart("https://example.com/cat.png", messages.ImageDetailHigh),
		}},
		{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		messages.ToolResultMessage("call_1", "18°C"),
	}
	tests := []struct {
		name  string
		model string // Options.Model
		req   messages.Request
		want  string // the expected body, as JSON
	}{
		{
			name:  "tools, named tool choice and every option",
			model: "gpt-4o-mini",
			req: messages.Request{
				Model:             "gpt-4o",
				Messages:          conversation,
				Tools:             []messages.ToolDefinition{weather, {Name: "now"}},
				ToolChoice:        &messages.ToolChoice{Mode: messages.ToolChoiceFunction, Name: "get_weather"},
				ParallelToolCalls: ptr(false),
				ResponseFormat:    &messages.ResponseFormat{Type: messages.ResponseJSONSchema, Name: "answer", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
				Temperature:       ptr(0.5),
				TopP:              ptr(0.9),
				MaxTokens:         256,
				Stop:              []string{"END"},
				Seed:              ptr(int64(42)),
				User:              "user-7",
				Metadata:          map[string]string{"session": "s1"},
			},
			want: `{
				"model": "gpt-4o",
				"stream": false,
				"messages": [
					{"role": "system", "content": "be brief"},
					{"role": "developer", "content": "use metric units"},
					{"role": "user", "name": "ana", "content": [
						{"type": "text", "text": "what is this?"},
						{"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "high"}}
					]},
					{"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
					{"role": "tool", "content": "18°C", "tool_call_id": "call_1"}
				],
				"tools": [
					{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city", "strict": true,
						"parameters": {"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}},
					{"type": "function", "function": {"name": "now", "parameters": {"type":"object","properties":{}}}}
				],
				"tool_choice": {"type": "function", "function": {"name": "get_weather"}},
				"parallel_tool_calls": false,
				"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": {"type":"object"}, "strict": true}},
				"temperature": 0.5,
				"top_p": 0.9,
				"max_tokens": 256,
				"stop": ["END"],
				"seed": 42,
				"user": "user-7",
				"metadata": {"session": "s1"}
			}`,
		},
		{
			name:  "no tools: tool_choice and parallel_tool_calls absent",
			model: "gpt-4o-mini",
			req: messages.Request{
				Messages:          []messages.Message{messages.UserText("hi")},
				ToolChoice:        &messages.ToolChoice{Mode: messages.ToolChoiceAuto},
				ParallelToolCalls: ptr(true),
				ResponseFormat:    &messages.ResponseFormat{Type: messages.ResponseJSONObject},
			},
			want: `{"model": "gpt-4o-mini", "stream": false, "messages": [{"role": "user", "content": "hi"}],
				"response_format": {"type": "json_object"}}`,
		},
		{
			name:  "tool choice modes",
			model: "m",
			req: messages.Request{
				Messages:   []messages.Message{messages.UserText("hi")},
				Tools:      []messages.ToolDefinition{weather},
				ToolChoice: &messages.ToolChoice{Mode: messages.ToolChoiceRequired},
			},
			want: `{"model": "m", "stream": false, "messages": [{"role": "user", "content": "hi"}],
				"tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city", "strict": true,
					"parameters": {"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}],
				"tool_choice": "required"}`,
		},
		{
			name:  "reasoning model: max_completion_tokens and reasoning_effort",
			model: "o3-mini",
			req: messages.Request{
				Messages:        []messages.Message{messages.UserText("think")},
				MaxTokens:       1000,
				ReasoningEffort: "high",
			},
			want: `{"model": "o3-mini", "stream": false, "messages": [{"role": "user", "content": "think"}],
				"max_completion_tokens": 1000, "reasoning_effort": "high"}`,
		},
		{
			name:  "text response format",
			model: "m",
			req: messages.Request{
				Messages:       []messages.Message{messages.UserText("hi")},
				ResponseFormat: &messages.ResponseFormat{Type: messages.ResponseText},
			},
			want: `{"model": "m", "stream": false, "messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "text"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, reply{body: okBody("ok")})
			p, _ := newProvider(t, s, func(o *openai.Options) { o.Model = tt.model })
			if _, err := p.Chat(t.Context(), tt.req); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(jsonOf(t, tt.want), any(s.body(t, 0))); d != "" {
				t.Errorf("request body (-want +got):\n%s", d)
			}
		})
	}
}

func TestRequestMapping_ZeroTemperatureIsSent(t *testing.T) {
	s := newServer(t, reply{body: okBody("ok")})
	p, _ := newProvider(t, s, nil)
	req := messages.Request{Messages: []messages.Message{messages.UserText("hi")}, Temperature: ptr(0.0), TopP: ptr(0.0)}
	if _, err := p.Chat(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	body := s.body(t, 0)
	for _, k := range []string{"temperature", "top_p"} {
		v, ok := body[k].(float64)
		if !ok || v <= 0 || v > 1e-30 {
			t.Errorf("%s = %v, want present and (all but) zero", k, body[k])
		}
	}
}

func TestRequestMapping_Headers(t *testing.T) {
	s := newServer(t, reply{body: okBody("ok")})
	p, _ := newProvider(t, s, func(o *openai.Options) { o.Organization = "org-1"; o.BaseURL += "/" })
	if _, err := p.Chat(t.Context(), hello); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	h, path := s.headers[0], s.paths[0]
	s.mu.Unlock()
	if h.Get("Authorization") != "Bearer sk-test-secret" || h.Get("OpenAI-Organization") != "org-1" {
		t.Errorf("headers = %v", h)
	}
	if path != "/v1/chat/completions" {
		t.Errorf("path = %q, want /v1/chat/completions", path)
	}
}

func TestRequestMapping_Rejected(t *testing.T) {
	tests := []struct {
		name  string
		model string
		req   messages.Request
		msg   string
	}{
		{"no model", "", hello, "no model"},
		{"audio part", "m", messages.Request{Messages: []messages.Message{{Role: messages.RoleUser, Content: messages.Content{
			{Type: messages.PartInputAudio, InputAudio: &messages.InputAudio{Data: "AAAA", Format: "wav"}},
		}}}}, "input_audio"},
		{"unknown role", "m", messages.Request{Messages: []messages.Message{{Role: "narrator", Content: messages.Text("x")}}}, "narrator"},
		{"unknown tool choice", "m", messages.Request{Messages: hello.Messages, Tools: []messages.ToolDefinition{{Name: "t"}},
			ToolChoice: &messages.ToolChoice{Mode: "sometimes"}}, "sometimes"},
		{"named tool choice without a name", "m", messages.Request{Messages: hello.Messages, Tools: []messages.ToolDefinition{{Name: "t"}},
			ToolChoice: &messages.ToolChoice{Mode: messages.ToolChoiceFunction}}, "name"},
		{"unknown response format", "m", messages.Request{Messages: hello.Messages, ResponseFormat: &messages.ResponseFormat{Type: "xml"}}, "xml"},
		{"sampling on a reasoning model", "o1", messages.Request{Messages: hello.Messages, Temperature: ptr(0.3)}, "o1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, reply{body: okBody("ok")})
			p, _ := newProvider(t, s, func(o *openai.Options) { o.Model = tt.model })
			_, err := p.Chat(t.Context(), tt.req)
			checkError(t, err, providers.KindBadRequest, 0, tt.msg)
			if _, serr := p.Stream(t.Context(), tt.req); providers.KindOf(serr) != providers.KindBadRequest {
				t.Errorf("Stream err = %v, want a bad request", serr)
			}
			if s.requests() != 0 {
				t.Errorf("requests = %d, want 0", s.requests())
			}
		})
	}
}

func TestChat_Response(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *messages.Response
	}{
		{
			name: "tool calls with null content, unknown finish reason, detailed usage",
			body: `{"id":"c1","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,
				"tool_calls":[{"id":"call_1","type":"function","function":{"name":"a","arguments":"{}"}},
				{"id":"call_2","type":"function","function":{"name":"b","arguments":"{\"x\":1}"}}]},"finish_reason":"tool_calls"}],
				"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,
				"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}`,
			want: &messages.Response{ID: "c1", Model: "gpt-4o", FinishReason: messages.FinishToolCalls,
				Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{
					{ID: "call_1", Name: "a", Arguments: "{}"}, {ID: "call_2", Name: "b", Arguments: `{"x":1}`},
				}},
				Usage: messages.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, CachedPromptTokens: 4, ReasoningTokens: 2}},
		},
		{
			name: "missing content and usage, unknown finish reason",
			body: `{"id":"c2","choices":[{"index":0,"message":{"role":"assistant"},"finish_reason":"eos_token"}]}`,
			want: &messages.Response{ID: "c2", FinishReason: messages.FinishOther, Message: messages.Message{Role: messages.RoleAssistant}},
		},
		{
			name: "no choices",
			body: `{"id":"c3","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":0,"total_tokens":3}}`,
			want: &messages.Response{ID: "c3", Message: messages.Message{Role: messages.RoleAssistant},
				Usage: messages.Usage{PromptTokens: 3, TotalTokens: 3}},
		},
		{
			name: "first choice only, refusal",
			body: `{"id":"c4","choices":[{"index":0,"message":{"role":"assistant","content":"","refusal":"I can't"},"finish_reason":"stop"},
				{"index":1,"message":{"role":"assistant","content":"other"},"finish_reason":"stop"}]}`,
			want: &messages.Response{ID: "c4", FinishReason: messages.FinishStop,
				Message: messages.Message{Role: messages.RoleAssistant, Refusal: "I can't"}},
		},
		{
			name: "content as parts",
			body: `{"id":"c5","choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"length"}]}`,
			want: &messages.Response{ID: "c5", FinishReason: messages.FinishLength,
				Message: messages.Message{Role: messages.RoleAssistant, Content: messages.Content{messages.TextPart("a"), messages.TextPart("b")}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, reply{body: tt.body})
			p, _ := newProvider(t, s, nil)
			got, err := p.Chat(t.Context(), hello)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Response (-want +got):\n%s", d)
			}
		})
	}
}

func TestLogging_NeverLogsTheKey(t *testing.T) {
	s := newServer(t, reply{status: 500, body: "down"}, reply{body: okBody("ok")})
	var buf bytes.Buffer
	p, _ := newProvider(t, s, func(o *openai.Options) { o.Logger = zerolog.New(&buf).Level(zerolog.DebugLevel) })
	if _, err := p.Chat(t.Context(), hello); err != nil {
		t.Fatal(err)
	}
	st, err := p.Stream(t.Context(), hello)
	if err == nil {
		st.Close()
	}
	logs := buf.String()
	if strings.Contains(logs, "sk-test-secret") {
		t.Fatalf("logs contain the API key:\n%s", logs)
	}
	for _, want := range []string{`"base_url":"` + s.URL + `/v1"`, `"model":"gpt-4o-mini"`, `"attempt":1`, `"attempt":2`, `"status":500`, `"status":200`, `"retry":1`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
}
