package messages

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkEventJSON fails t unless appendEventJSON writes ev as json.Marshal
// does, or leaves it to json.Marshal (want false).
func checkEventJSON(t *testing.T, ev JournalEvent, wantWritten bool) {
	t.Helper()
	got, ok := appendEventJSON([]byte("prefix"), ev)
	if ok != wantWritten {
		t.Fatalf("appendEventJSON(%#v) wrote it: %v, want %v", ev, ok, wantWritten)
	}
	if !ok {
		if string(got) != "prefix" {
			t.Fatalf("appendEventJSON(%#v) left %q after refusing it", ev, got)
		}
		return
	}
	want, err := json.Marshal(ev)
	if err != nil {
		t.Fatalf("json.Marshal(%#v): %v, but appendEventJSON wrote it", ev, err)
	}
	if string(got) != "prefix"+string(want) {
		t.Fatalf("appendEventJSON(%#v):\n got %s\nwant prefix%s", ev, got, want)
	}
}

// awkward holds strings encoding/json escapes in every way it has.
const awkward = "quote \" backslash \\ <html> & \b\f\n\r\t \x00\x01\x1f \x7f é 日本 🙂 \u2028\u2029 bad \xff\xfe end"

// TestEventJSON_MatchesMarshal checks the events a turn journals, with
// plain and awkward text, empty and full optional members, and costs of
// every magnitude.
func TestEventJSON_MatchesMarshal(t *testing.T) {
	call := ToolCall{ID: "call_1", Name: "lookup", Arguments: `{"key":"alpha <&>"}`}
	usage := Usage{PromptTokens: 19, CompletionTokens: 6, TotalTokens: 25, CachedPromptTokens: 3, ReasoningTokens: 2}
	for _, ev := range []JournalEvent{
		Activated{Activation: 7},
		Activated{Activation: math.MaxUint64, Node: "node-" + awkward},
		UserMessage{Turn: 0, Message: UserText("What is the value of alpha?")},
		UserMessage{TurnID: "t-" + awkward, Turn: 12, Message: UserText(awkward)},
		UserMessage{Turn: 1, Message: Message{Role: RoleUser}},
		UserMessage{Turn: 2, Message: UserText("traced"), TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"},
		UserMessage{Turn: 2, Message: UserText("half traced"), SpanID: awkward},
		AssistantMessage{Turn: 0, Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{call}}, FinishReason: FinishToolCalls, Model: "m", Usage: Usage{PromptTokens: 1}},
		AssistantMessage{Turn: 3, Message: Message{Role: RoleAssistant, Content: Text(awkward), Name: awkward, Refusal: awkward,
			ToolCalls: []ToolCall{call, {ID: awkward, Name: awkward, Arguments: awkward}}}, FinishReason: FinishStop, Usage: usage, Cost: 0.000123},
		AssistantMessage{Turn: 1, Message: Message{Role: RoleAssistant, Content: Text("x")}, Cost: 1e-7},
		AssistantMessage{Turn: 1, Message: Message{Role: RoleAssistant}, Cost: -2.5e21},
		AssistantMessage{Turn: 1, Message: Message{Role: RoleAssistant}, Cost: 123456789.125},
		AssistantMessage{Turn: 1, Message: Message{Role: RoleAssistant}, Cost: math.SmallestNonzeroFloat64},
		AssistantMessage{Turn: 1, Message: Message{Role: RoleAssistant}, Cost: math.MaxFloat64},
		ToolCallStarted{Turn: 2, CallID: "call_1", Name: "lookup", Arguments: `{"key":"alpha"}`},
		ToolCallStarted{Turn: -1, CallID: awkward, Name: awkward, Arguments: awkward},
		ToolResult{Turn: 0, CallID: "call_1", Name: "lookup", Content: "value-of-alpha", Duration: 1500 * time.Microsecond},
		ToolResult{Turn: 0, CallID: "c", Name: "n", Content: awkward, IsError: true},
		ToolResult{Turn: 0, CallID: "c", Name: "n", Metadata: map[string]any{}},
		TurnCompleted{Turn: 0, Outcome: OutcomeCompleted, FinishReason: FinishStop, Usage: usage, Cost: 0.5, RoundTrips: 2},
		TurnCompleted{Turn: 9, TurnID: awkward, Outcome: OutcomeLimit, Reason: awkward, RoundTrips: 8},
	} {
		checkEventJSON(t, ev, true)
	}
}

// TestEventJSON_KnowsEveryMember fails when a member is added to an event
// appendEventJSON writes: the encoder would leave the new member out of
// the journal. Teach appendEventJSON the member (or to hand such events
// to json.Marshal, as it does those with a structured answer, checked in
// TestEventJSON_LeavesTheRest), then list it here.
func TestEventJSON_KnowsEveryMember(t *testing.T) {
	written := map[reflect.Type][]string{
		reflect.TypeFor[Activated]():        {"activation", "node"},
		reflect.TypeFor[UserMessage]():      {"turn_id", "turn", "message", "trace_id", "span_id", "output"},
		reflect.TypeFor[AssistantMessage](): {"turn", "message", "finish_reason", "model", "usage", "cost"},
		reflect.TypeFor[ToolCallStarted]():  {"turn", "call_id", "name", "arguments"},
		reflect.TypeFor[ToolResult]():       {"turn", "call_id", "name", "content", "is_error", "metadata", "duration_ns"},
		reflect.TypeFor[TurnCompleted]():    {"turn", "turn_id", "outcome", "finish_reason", "reason", "usage", "cost", "round_trips", "output", "output_failure"},
		reflect.TypeFor[Message]():          {"role", "content", "name", "tool_calls", "tool_call_id", "refusal"},
		reflect.TypeFor[ToolCall]():         {"id", "name", "arguments"},
		reflect.TypeFor[Usage]():            {"prompt_tokens", "completion_tokens", "total_tokens", "cached_prompt_tokens", "reasoning_tokens"},
	}
	for typ, want := range written {
		var got []string
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			if name != "-" {
				got = append(got, name)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s has the JSON members %q; appendEventJSON writes %q", typ, got, want)
		}
	}
}

// TestEventJSON_LeavesTheRest checks that what appendEventJSON does not
// write goes to json.Marshal: other events, multi-part and non-text
// content, tool metadata, and costs encoding/json refuses.
func TestEventJSON_LeavesTheRest(t *testing.T) {
	for _, ev := range []JournalEvent{
		TurnCancelled{Turn: 1, Reason: "stop"},
		&ToolCallStarted{Turn: 1},
		UserMessage{Message: Message{Role: RoleUser, Content: Content{TextPart("a"), TextPart("b")}}},
		UserMessage{Message: Message{Role: RoleUser, Content: Content{{Type: PartImageURL, ImageURL: &ImageURL{URL: "http://x"}}}}},
		ToolResult{Content: "x", Metadata: map[string]any{"k": 1}},
		AssistantMessage{Message: Message{Role: RoleAssistant}, Cost: math.NaN()},
		TurnCompleted{Outcome: OutcomeCompleted, Cost: math.Inf(1)},
		UserMessage{Message: UserText("extract"), Output: &OutputSpec{Name: "record", Schema: json.RawMessage(`{"type":"object"}`)}},
		TurnCompleted{Outcome: OutcomeCompleted, Output: json.RawMessage(`{"a":1}`)},
		TurnCompleted{Outcome: OutcomeFailed, OutputFailure: &OutputFailure{}},
	} {
		checkEventJSON(t, ev, false)
	}
}

// TestNewEnvelope_Allocations checks that encoding the events of a turn
// allocates their JSON once each, without reflection.
func TestNewEnvelope_Allocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without the race detector")
	}
	events := []JournalEvent{
		UserMessage{TurnID: "t1", Turn: 0, Message: UserText("What is the value of alpha? Use the lookup tool.")},
		AssistantMessage{Turn: 0, Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"key":"alpha"}`}}},
			FinishReason: FinishToolCalls, Model: "m", Usage: Usage{PromptTokens: 19, CompletionTokens: 6, TotalTokens: 25}},
		ToolCallStarted{Turn: 0, CallID: "call_1", Name: "lookup", Arguments: `{"key":"alpha"}`},
		ToolResult{Turn: 0, CallID: "call_1", Name: "lookup", Content: "value-of-alpha", Duration: time.Millisecond},
		AssistantMessage{Turn: 0, Message: AssistantText("The value of alpha is value-of-alpha."), FinishReason: FinishStop, Model: "m",
			Usage: Usage{PromptTokens: 40, CompletionTokens: 9, TotalTokens: 49}, Cost: 0.0001},
		TurnCompleted{Turn: 0, TurnID: "t1", Outcome: OutcomeCompleted, FinishReason: FinishStop, RoundTrips: 2},
	}
	at := time.Unix(1700000000, 0)
	allocs := testing.AllocsPerRun(100, func() {
		for _, ev := range events {
			if _, err := NewEnvelope(1, at, ev); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs > float64(len(events)) {
		t.Errorf("encoding the %d events of a turn allocated %v times, want at most one each", len(events), allocs)
	}
}

// FuzzEventJSON checks appendEventJSON against json.Marshal on events
// made of arbitrary strings, numbers and costs.
func FuzzEventJSON(f *testing.F) {
	f.Add("call_1", "lookup", `{"key":"alpha"}`, awkward, int64(3), 0.000123, true)
	f.Add("", "", "", "", int64(-1), 1e21, false)
	f.Add("\xff", "\u2028", "<>&", "\x00", int64(math.MaxInt64), -1e-7, true)
	f.Fuzz(func(t *testing.T, id, name, args, text string, n int64, cost float64, flag bool) {
		usage := Usage{PromptTokens: n, CompletionTokens: -n, TotalTokens: n / 3, CachedPromptTokens: n % 7}
		msg := Message{Role: Role(name), Content: Text(text), Name: id, ToolCallID: args, Refusal: text,
			ToolCalls: []ToolCall{{ID: id, Name: name, Arguments: args}}}
		written := !math.IsNaN(cost) && !math.IsInf(cost, 0)
		checkEventJSON(t, Activated{Activation: uint64(n), Node: name}, true)
		checkEventJSON(t, UserMessage{TurnID: id, Turn: int(n), Message: msg}, true)
		checkEventJSON(t, AssistantMessage{Turn: int(n), Message: msg, FinishReason: FinishReason(args), Model: name, Usage: usage, Cost: cost}, written)
		checkEventJSON(t, ToolCallStarted{Turn: int(n), CallID: id, Name: name, Arguments: args}, true)
		checkEventJSON(t, ToolResult{Turn: int(n), CallID: id, Name: name, Content: text, IsError: flag, Duration: time.Duration(n)}, true)
		checkEventJSON(t, TurnCompleted{Turn: int(n), TurnID: id, Outcome: TurnOutcome(name), FinishReason: FinishReason(args), Reason: text,
			Usage: usage, Cost: cost, RoundTrips: int(n)}, written)
	})
}
