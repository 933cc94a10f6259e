package messages

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	var got T
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("unmarshal %T from %s: %v", v, b, err)
	}
	// Marshalling again must give the same bytes: the form is stable.
	b2, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("re-marshal %T: %v", v, err)
	}
	if string(b) != string(b2) {
		t.Errorf("JSON form not stable:\n first %s\nsecond %s", b, b2)
	}
	return got
}

func TestMessage_RoundTrip(t *testing.T) {
	tests := []Message{
		SystemText("be brief"),
		DeveloperText("use tools"),
		UserText("hello 世界"),
		AssistantText("hi"),
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.txt"}`}, {ID: "c2", Name: "bash", Arguments: `{"command":"ls"`}}},
		ToolResultMessage("c1", "contents"),
		{Role: RoleUser, Name: "ann", Content: Content{TextPart("look: "), ImagePart("https://x/y.png", ImageDetailHigh)}},
		{Role: RoleUser, Content: Content{{Type: PartInputAudio, InputAudio: &InputAudio{Data: "AAA=", Format: "wav"}}, {Type: PartFile, File: &File{FileID: "f1", Filename: "a.pdf"}}}},
		{Role: RoleAssistant, Refusal: "no"},
	}
	for _, m := range tests {
		t.Run(string(m.Role), func(t *testing.T) {
			got := roundTrip(t, m)
			if diff := cmp.Diff(m, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContent_WireForms(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Content
		out  string
	}{
		{"string", `"hi"`, Text("hi"), `"hi"`},
		{"null", `null`, nil, `null`},
		{"empty string", `""`, nil, `null`},
		{"array of one text", `[{"type":"text","text":"hi"}]`, Text("hi"), `"hi"`},
		{"array with image", `[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u","detail":"low"}}]`,
			Content{TextPart("a"), ImagePart("u", ImageDetailLow)},
			`[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u","detail":"low"}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Content
			if err := json.Unmarshal([]byte(tt.in), &c); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, c); diff != "" {
				t.Errorf("decode (-want +got):\n%s", diff)
			}
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.out {
				t.Errorf("encode = %s, want %s", b, tt.out)
			}
		})
	}
}

func TestContent_RejectsOtherJSON(t *testing.T) {
	for _, in := range []string{`42`, `{"text":"x"}`, `true`} {
		var c Content
		err := json.Unmarshal([]byte(in), &c)
		if err == nil || !strings.Contains(err.Error(), "content") {
			t.Errorf("Unmarshal(%s) error = %v, want a content error", in, err)
		}
	}
}

func TestAssistantNullContentWithToolCalls(t *testing.T) {
	in := `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"f","arguments":"{}"}]}`
	var m Message
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatalf("null assistant content must be accepted: %v", err)
	}
	if len(m.ToolCalls) != 1 || m.Text() != "" {
		t.Errorf("got %+v", m)
	}
}

func TestFinishReason_Unknown(t *testing.T) {
	tests := map[string]FinishReason{
		`"stop"`: FinishStop, `"length"`: FinishLength, `"tool_calls"`: FinishToolCalls,
		`"content_filter"`: FinishContentFilter, `"function_call"`: FinishToolCalls,
		`"eos_token"`: FinishOther, `"weird"`: FinishOther, `null`: "",
	}
	for in, want := range tests {
		var f FinishReason
		if err := json.Unmarshal([]byte(in), &f); err != nil {
			t.Errorf("Unmarshal(%s): %v", in, err)
			continue
		}
		if f != want {
			t.Errorf("Unmarshal(%s) = %q, want %q", in, f, want)
		}
	}
}

func TestUsage_AddAndRoundTrip(t *testing.T) {
	u := Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, CachedPromptTokens: 4, ReasoningTokens: 2}
	if got := u.Add(u); got != (Usage{20, 10, 30, 8, 4}) {
		t.Errorf("Add = %+v", got)
	}
	if got := roundTrip(t, u); got != u {
		t.Errorf("round trip = %+v", got)
	}
	if !(Usage{}).IsZero() || u.IsZero() {
		t.Error("IsZero wrong")
	}
}

func TestToolChoice_JSON(t *testing.T) {
	tests := []struct {
		tc   ToolChoice
		wire string
	}{
		{ToolChoice{Mode: ToolChoiceNone}, `"none"`},
		{ToolChoice{Mode: ToolChoiceAuto}, `"auto"`},
		{ToolChoice{Mode: ToolChoiceRequired}, `"required"`},
		{ToolChoice{Mode: ToolChoiceFunction, Name: "grep"}, `{"type":"function","function":{"name":"grep"}}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.tc)
		if err != nil || string(b) != tt.wire {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.tc, b, err, tt.wire)
		}
		var got ToolChoice
		if err := json.Unmarshal([]byte(tt.wire), &got); err != nil || got != tt.tc {
			t.Errorf("Unmarshal(%s) = %+v, %v", tt.wire, got, err)
		}
	}
	for _, bad := range []string{`"sometimes"`, `{"type":"function"}`, `{"type":"x","function":{"name":"a"}}`} {
		var got ToolChoice
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
	if _, err := json.Marshal(ToolChoice{Mode: ToolChoiceFunction}); err == nil {
		t.Error("function mode without name marshalled")
	}
}

func TestRequestResponse_RoundTrip(t *testing.T) {
	temp, topP, seed, par := 0.2, 0.9, int64(7), false
	req := Request{
		Model:      "gpt-4o-mini",
		Messages:   []Message{SystemText("s"), UserText("u")},
		Tools:      []ToolDefinition{{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{}}`), Strict: true}},
		ToolChoice: &ToolChoice{Mode: ToolChoiceAuto}, ParallelToolCalls: &par,
		ResponseFormat: &ResponseFormat{Type: ResponseJSONSchema, Name: "out", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
		Temperature:    &temp, TopP: &topP, MaxTokens: 100, Stop: []string{"\n\n"}, Seed: &seed,
		ReasoningEffort: "low", User: "u1", Metadata: map[string]string{"k": "v"},
	}
	got := roundTrip(t, req)
	if diff := cmp.Diff(req, got); diff != "" {
		t.Errorf("request round trip (-want +got):\n%s", diff)
	}
	resp := Response{ID: "r1", Model: "m", Message: AssistantText("x"), FinishReason: FinishStop, Usage: Usage{1, 2, 3, 0, 0}}
	if diff := cmp.Diff(resp, roundTrip(t, resp)); diff != "" {
		t.Errorf("response round trip (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	call := func(ids ...string) Message {
		m := Message{Role: RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: "f", Arguments: "{}"})
		}
		return m
	}
	tests := []struct {
		name      string
		msgs      []Message
		wantIndex int // -2 = valid
		wantText  string
	}{
		{"valid plain", []Message{SystemText("s"), UserText("u"), AssistantText("a")}, -2, ""},
		{"valid tools", []Message{UserText("u"), call("a", "b"), ToolResultMessage("b", "1"), ToolResultMessage("a", "2"), AssistantText("done")}, -2, ""},
		{"empty", nil, -1, "empty"},
		{"unknown role", []Message{{Role: "robot"}}, 0, `unknown role "robot"`},
		{"tool without call", []Message{UserText("u"), ToolResultMessage("x", "r")}, 1, `did not call`},
		{"tool answered twice", []Message{UserText("u"), call("a"), ToolResultMessage("a", "1"), ToolResultMessage("a", "2")}, 3, "answered twice"},
		{"unanswered before user", []Message{UserText("u"), call("a", "b"), ToolResultMessage("a", "1"), UserText("again")}, 1, `"b" has no tool result`},
		{"unanswered at end", []Message{UserText("u"), call("a")}, 1, `"a" has no tool result`},
		{"missing tool_call_id", []Message{UserText("u"), call("a"), {Role: RoleTool, Content: Text("x")}}, 2, "no tool_call_id"},
		{"duplicate call id", []Message{UserText("u"), call("a", "a")}, 1, "appears twice"},
		{"call without id", []Message{UserText("u"), {Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "f"}}}}, 1, "has no id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.msgs)
			if tt.wantIndex == -2 {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want *ValidationError", err)
			}
			if ve.Index != tt.wantIndex || !strings.Contains(ve.Error(), tt.wantText) {
				t.Errorf("Validate = index %d %q, want index %d containing %q", ve.Index, ve.Error(), tt.wantIndex, tt.wantText)
			}
		})
	}
}

func TestEvents_RoundTrip(t *testing.T) {
	meta := EventMeta{Session: "s1", Turn: 2}
	events := []Event{
		TurnStarted{EventMeta: meta, TurnID: "t", Agent: "coder"},
		TextDelta{EventMeta: meta, Text: "he"},
		ToolStarted{EventMeta: meta, CallID: "c", Name: "bash", Arguments: `{"command":"ls"}`},
		ToolFinished{EventMeta: meta, CallID: "c", Name: "bash", Duration: 1500 * time.Millisecond, IsError: true, Content: "exit 1"},
		UsageReported{EventMeta: meta, Model: "m", Usage: Usage{1, 2, 3, 0, 0}, Cost: 0.5, SessionUsage: Usage{2, 4, 6, 0, 0}, SessionCost: 1},
		ContextCompacted{EventMeta: meta, Kind: "micro", TokensBefore: 100, TokensAfter: 40},
		TurnEnded{EventMeta: meta, TurnID: "t", Outcome: OutcomeCompleted, FinishReason: FinishStop, Text: "done", Usage: Usage{1, 1, 2, 0, 0}, RoundTrips: 2},
		ErrorEvent{EventMeta: meta, Message: "boom", Kind: "provider"},
		AgentChanged{EventMeta: meta, From: "a", To: "b"},
		SubAgentStarted{EventMeta: meta, CallID: "c", Child: "s1/sub/1", Agent: "r", Depth: 1},
		SubAgentEnded{EventMeta: meta, CallID: "c", Child: "s1/sub/1", Outcome: OutcomeCompleted, Usage: Usage{1, 1, 2, 0, 0}},
		ApprovalPending{EventMeta: meta, CallID: "c", Tool: "bash", Reason: "ask"},
		ToolProgress{EventMeta: meta, CallID: "c", Name: "mcp__s__long", Progress: 2, Total: 5, Message: "step 2"},
		ElicitationPending{EventMeta: meta, ID: "e1", Server: "files", CallID: "c", Message: "Which folder?", Mode: "form",
			Fields: []string{"folder"}, Expires: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		ElicitationAnswered{EventMeta: meta, ID: "e1", Action: "decline", By: "caller"},
	}
	seen := map[string]bool{}
	for _, ev := range events {
		if seen[ev.EventType()] {
			t.Fatalf("duplicate event type %q", ev.EventType())
		}
		seen[ev.EventType()] = true
		b, err := MarshalEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalEvent(b)
		if err != nil {
			t.Fatalf("UnmarshalEvent(%s): %v", b, err)
		}
		if diff := cmp.Diff(ev, got); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", ev.EventType(), diff)
		}
		if got.Meta() != meta {
			t.Errorf("Meta = %+v", got.Meta())
		}
	}
	if _, err := UnmarshalEvent([]byte(`{"type":"nope","data":{}}`)); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown type error = %v", err)
	}
}
