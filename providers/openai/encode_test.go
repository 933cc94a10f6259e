package openai

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/messages"
)

// goOpenAIBody is the body go-openai's client sends for req: its
// ChatCompletionRequest (as toRequest maps it) encoded by encoding/json, as
// the client's request builder does, with Stream set as
// CreateChatCompletionStream sets it.
func goOpenAIBody(req messages.Request, model string, stream bool) ([]byte, error) {
	oreq, err := toRequest(req, model, stream)
	if err != nil {
		return nil, err
	}
	return json.Marshal(oreq)
}

// checkSameBody compares appendRequest's body for req with go-openai's:
// both fail with the same message when the mapping fails, both fail when
// encoding/json does, and otherwise the bytes are equal (and so are the
// decoded values, which a failure shows as a diff).
func checkSameBody(t *testing.T, req messages.Request, model string, stream bool) {
	t.Helper()
	want, wantErr := goOpenAIBody(req, model, stream)
	got, gotErr := appendRequest(nil, req, model, stream)
	if wantErr != nil || gotErr != nil {
		_, mapErr := toRequest(req, model, stream)
		switch {
		case wantErr == nil:
			t.Fatalf("appendRequest failed (%v); go-openai sends %s", gotErr, want)
		case gotErr == nil:
			t.Fatalf("appendRequest sent %s; go-openai fails: %v", got, wantErr)
		case mapErr != nil && mapErr.Error() != gotErr.Error():
			t.Fatalf("appendRequest fails with %q; go-openai's mapping with %q", gotErr, mapErr)
		}
		return
	}
	if string(got) == string(want) {
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("appendRequest wrote invalid JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("bodies differ\n got: %s\nwant: %s\ndecoded (-want +got):\n%s", got, want, cmp.Diff(w, g))
}

func ptr[T any](v T) *T { return &v }

func TestAppendRequest_SameBytesAsGoOpenAI(t *testing.T) {
	weather := messages.ToolDefinition{
		Name: "get_weather", Description: "Weather <in> a city & more",
		Parameters: json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"city\": {\"type\": \"string\", \"description\": \"a \\\"city\\\" <b> \u2028\"}},\n  \"required\": [\"city\"]\n}"),
		Strict:     true,
	}
	conversation := []messages.Message{
		messages.SystemText("be brief"),
		messages.DeveloperText("use metric units"),
		{Role: messages.RoleUser, Name: "ana", Content: messages.Content{
			messages.TextPart("what is this?"),
			messages.TextPart(""),
			messages.ImagePart("https://example.com/cat.png?a=1&b=<2>", messages.ImageDetailHigh),
			messages.ImagePart("", ""),
		}},
		{Role: messages.RoleAssistant, Refusal: "no", ToolCalls: []messages.ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{Name: "now"},
			{ID: "call_3", Arguments: "{}"},
		}},
		messages.ToolResultMessage("call_1", "18°C\n\t\"quoted\" \x01 \x7f \u2029 \xff end"),
		{Role: messages.RoleAssistant, Refusal: "I can't", Content: messages.Content{messages.ImagePart("u", "low")}},
		{Role: messages.RoleUser, Content: messages.Text("")},
		{Role: messages.RoleUser},
	}
	tests := []struct {
		name  string
		model string
		req   messages.Request
	}{
		{"every option", "gpt-4o-mini", messages.Request{
			Model:             "gpt-4o",
			Messages:          conversation,
			Tools:             []messages.ToolDefinition{weather, {Name: "now"}},
			ToolChoice:        &messages.ToolChoice{Mode: messages.ToolChoiceFunction, Name: "get_weather"},
			ParallelToolCalls: ptr(false),
			ResponseFormat:    &messages.ResponseFormat{Type: messages.ResponseJSONSchema, Name: "answer", Schema: json.RawMessage(` {"type" : "object"} `), Strict: true},
			Temperature:       ptr(0.7),
			TopP:              ptr(0.9),
			MaxTokens:         256,
			Stop:              []string{"END", "<stop>"},
			Seed:              ptr(int64(-42)),
			ReasoningEffort:   "low",
			User:              "user-7",
			Metadata:          map[string]string{"session": "s1", "a&b": "<c>", "": "empty"},
		}},
		{"minimal", "m", messages.Request{Messages: []messages.Message{messages.UserText("hi")}}},
		{"no messages", "m", messages.Request{}},
		{"tools without a choice, parallel", "m", messages.Request{
			Messages: []messages.Message{messages.UserText("hi")}, Tools: []messages.ToolDefinition{weather}, ParallelToolCalls: ptr(true),
		}},
		{"tool choice required", "m", messages.Request{
			Messages: []messages.Message{messages.UserText("hi")}, Tools: []messages.ToolDefinition{weather},
			ToolChoice: &messages.ToolChoice{Mode: messages.ToolChoiceRequired},
		}},
		{"tool choice without tools is not sent", "m", messages.Request{
			Messages: []messages.Message{messages.UserText("hi")}, ToolChoice: &messages.ToolChoice{Mode: "bogus"}, ParallelToolCalls: ptr(true),
		}},
		{"zero temperature and top_p", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, Temperature: ptr(0.0), TopP: ptr(0.0)}},
		{"tiny and huge numbers", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, Temperature: ptr(1e-9), TopP: ptr(3e30), Seed: ptr(int64(math.MaxInt64))}},
		{"text response format", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, ResponseFormat: &messages.ResponseFormat{Type: messages.ResponseText}}},
		{"json object response format", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, ResponseFormat: &messages.ResponseFormat{Type: messages.ResponseJSONObject}}},
		{"json schema without name or schema", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, ResponseFormat: &messages.ResponseFormat{Type: messages.ResponseJSONSchema}}},
		{"reasoning model: max_tokens becomes max_completion_tokens", "o3-mini", messages.Request{Messages: []messages.Message{messages.UserText("x")}, MaxTokens: 100, ReasoningEffort: "high"}},
		{"reasoning model refuses a temperature", "o1", messages.Request{Messages: []messages.Message{messages.UserText("x")}, Temperature: ptr(0.5)}},
		{"GPT-6 with tools", oai.GPT6Sol, messages.Request{Messages: []messages.Message{messages.UserText("x")}, Tools: []messages.ToolDefinition{weather}}},
		{"GPT-6 with tools and tool choice none", oai.GPT6Sol, messages.Request{Messages: []messages.Message{messages.UserText("x")}, Tools: []messages.ToolDefinition{weather}, ToolChoice: &messages.ToolChoice{Mode: messages.ToolChoiceNone}, ReasoningEffort: "none"}},
		{"GPT-6 reasoning off with tools", oai.GPT6Luna, messages.Request{Messages: []messages.Message{messages.UserText("x")}, Tools: []messages.ToolDefinition{weather}, ReasoningEffort: "none", Temperature: ptr(0.2)}},
		{"GPT-6 with max_tokens", oai.GPT6Astra, messages.Request{Messages: []messages.Message{messages.UserText("x")}, MaxTokens: 10}},
		{"completion-only model", oai.GPT3Davinci, messages.Request{Messages: []messages.Message{messages.UserText("x")}}},
		{"no model", "", messages.Request{Messages: []messages.Message{messages.UserText("x")}}},
		{"unknown role", "m", messages.Request{Messages: []messages.Message{messages.UserText("x"), {Role: "robot"}}}},
		{"audio part", "m", messages.Request{Messages: []messages.Message{{Role: messages.RoleUser, Content: messages.Content{{Type: messages.PartInputAudio}}}}}},
		{"image part without its URL", "m", messages.Request{Messages: []messages.Message{{Role: messages.RoleUser, Content: messages.Content{{Type: messages.PartImageURL}}}}}},
		{"named tool choice without a name", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, Tools: []messages.ToolDefinition{weather}, ToolChoice: &messages.ToolChoice{Mode: messages.ToolChoiceFunction}}},
		{"unknown tool choice", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, Tools: []messages.ToolDefinition{weather}, ToolChoice: &messages.ToolChoice{Mode: "sometimes"}}},
		{"unknown response format", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, ResponseFormat: &messages.ResponseFormat{Type: "yaml"}}},
		{"invalid tool schema", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, Tools: []messages.ToolDefinition{{Name: "t", Parameters: json.RawMessage(`{"type":`)}}}},
		{"NaN temperature", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, Temperature: ptr(math.NaN())}},
		{"a temperature beyond float32", "m", messages.Request{Messages: []messages.Message{messages.UserText("x")}, Temperature: ptr(1e300)}},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) { checkSameBody(t, tt.req, tt.model, stream) })
		}
	}
}

func TestAppendRequest_ErrorsNameTheProblem(t *testing.T) {
	_, err := appendRequest(nil, messages.Request{
		Messages: []messages.Message{messages.UserText("x")},
		Tools:    []messages.ToolDefinition{{Name: "lookup", Parameters: json.RawMessage(`{`)}},
	}, "m", true)
	if err == nil || !strings.Contains(err.Error(), `tool "lookup": parameters`) {
		t.Fatalf("err = %v, want one naming the tool and its parameters", err)
	}
}

// FuzzAppendRequest builds requests from fuzzed strings and numbers and
// checks that appendRequest writes what go-openai's client writes.
func FuzzAppendRequest(f *testing.F) {
	f.Add("gpt-4o", "hello", "sys", "call_1", "lookup", `{"q":"x"}`, `{"type":"object","properties":{}}`, "auto", 0.5, int64(7), 100, true, uint8(0))
	f.Add("o3-mini", "<b>&</b>\u2028", "", "", "", "", ` { "a" : [1, 2.5e10, "x\u003c"] } `, "function", 0.0, int64(-1), 0, false, uint8(0xff))
	f.Add("", "\xff\xfe\x00", "\t\n", "id", "name", "\"", "not json", "none", math.Inf(1), int64(0), -5, true, uint8(0x5a))
	f.Add(oai.GPT6Sol, "x", "y", "c", "n", "{}", "{}", "none", 0.0, int64(0), 0, false, uint8(0x17))
	f.Add("gpt-5", "x", "y", "c", "n", "{}", "{}", "required", 2.0, int64(1<<40), 1, false, uint8(0x0f))
	f.Fuzz(func(t *testing.T, model, text, system, callID, toolName, args, schema, choice string, temp float64, seed int64, maxTokens int, stream bool, flags uint8) {
		req := messages.Request{
			Model:     model,
			MaxTokens: maxTokens,
			Messages: []messages.Message{
				messages.SystemText(system),
				messages.UserText(text),
				{Role: messages.RoleAssistant, Content: messages.Text(text), ToolCalls: []messages.ToolCall{{ID: callID, Name: toolName, Arguments: args}}},
				messages.ToolResultMessage(callID, args),
			},
		}
		if flags&1 != 0 {
			req.Tools = []messages.ToolDefinition{{Name: toolName, Description: text, Parameters: json.RawMessage(schema), Strict: flags&2 != 0}}
		}
		if flags&4 != 0 {
			req.ToolChoice = &messages.ToolChoice{Mode: messages.ToolChoiceMode(choice), Name: toolName}
		}
		if flags&8 != 0 {
			req.Temperature, req.TopP = &temp, &temp
		}
		if flags&16 != 0 {
			req.Seed = &seed
			req.ParallelToolCalls = ptr(flags&2 != 0)
		}
		if flags&32 != 0 {
			req.ResponseFormat = &messages.ResponseFormat{Type: messages.ResponseFormatType(choice), Name: toolName, Schema: json.RawMessage(schema)}
		}
		if flags&64 != 0 {
			req.Messages = append(req.Messages, messages.Message{Role: messages.Role(choice), Refusal: text, Name: system,
				Content: messages.Content{messages.TextPart(text), messages.ImagePart(args, messages.ImageDetail(choice))}})
			req.Stop = []string{text, system}
			req.User = system
			req.ReasoningEffort = choice
		}
		if flags&128 != 0 {
			req.Metadata = map[string]string{text: system, system: args, callID: text}
		}
		checkSameBody(t, req, "fallback-model", stream)
	})
}

// TestAppendRequest_NoAllocations encodes a turn's request (a system
// prompt, a conversation with a tool call and its result, a typed tool)
// into a buffer with room, as the pooled buffers of the provider have, and
// finds no allocation: no reflection, no intermediate request value.
func TestAppendRequest_NoAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	req := messages.Request{
		Messages: []messages.Message{
			messages.SystemText("You are a helpful assistant."),
			messages.UserText("What is the capital of France?"),
			{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"France"}`}}},
			messages.ToolResultMessage("call_1", "Paris"),
		},
		Tools: []messages.ToolDefinition{{Name: "lookup", Description: "Look a fact up",
			Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)}},
	}
	buf := make([]byte, 0, 4<<10)
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := appendRequest(buf[:0], req, "gpt-4o-mini", true); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("appendRequest allocated %v times per request, want 0", allocs)
	}
}

// BenchmarkRequestEncode encodes a turn's second request (a system
// prompt, the question, the reply calling a tool, its result, one typed
// tool) as go-openai did (mapping onto its request type, encoding/json)
// and as the provider does (appendRequest into a reused buffer).
func BenchmarkRequestEncode(b *testing.B) {
	req := messages.Request{
		Messages: []messages.Message{
			messages.SystemText("You are a helpful assistant. Answer briefly and use the tools you are given."),
			messages.UserText("What is the capital of France, and how many people live there?"),
			{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"France"}`}}},
			messages.ToolResultMessage("call_1", "Paris; about 2.1 million people in the city proper."),
		},
		Tools: []messages.ToolDefinition{{Name: "lookup", Description: "Look a fact up",
			Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"what to look up"}},"required":["q"],"additionalProperties":false}`)}},
	}
	b.Run("go-openai", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := goOpenAIBody(req, "gpt-4o-mini", true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendRequest", func(b *testing.B) {
		b.ReportAllocs()
		var pool bodyPool
		for b.Loop() {
			body := pool.get()
			buf, err := appendRequest(body.buf, req, "gpt-4o-mini", true)
			if err != nil {
				b.Fatal(err)
			}
			body.buf = buf
			body.release()
		}
	})
}
