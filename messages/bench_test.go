package messages_test

import (
	"testing"
	"time"

	"github.com/agcore/agcore/messages"
)

// turnEvents are the journal events of one turn of the benchmark workloads:
// a question, a reply calling one tool, the call's start and result, the
// answer and the end of the turn.
func turnEvents() []messages.JournalEvent {
	call := messages.ToolCall{ID: "call_1", Name: "lookup", Arguments: `{"key":"alpha"}`}
	return []messages.JournalEvent{
		messages.UserMessage{TurnID: "t-1", Message: messages.UserText("What is the value of alpha? Use the lookup tool.")},
		messages.AssistantMessage{Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call}},
			FinishReason: messages.FinishToolCalls, Model: "scripted", Usage: messages.Usage{PromptTokens: 40, CompletionTokens: 8, TotalTokens: 48}},
		messages.ToolCallStarted{CallID: call.ID, Name: call.Name, Arguments: call.Arguments},
		messages.ToolResult{CallID: call.ID, Name: call.Name, Content: "value-of-alpha", Duration: 12 * time.Microsecond},
		messages.AssistantMessage{Message: messages.AssistantText("The value of alpha is value-of-alpha."), FinishReason: messages.FinishStop,
			Model: "scripted", Usage: messages.Usage{PromptTokens: 70, CompletionTokens: 9, TotalTokens: 79}},
		messages.TurnCompleted{TurnID: "t-1", Outcome: messages.OutcomeCompleted, FinishReason: messages.FinishStop,
			Usage: messages.Usage{PromptTokens: 110, CompletionTokens: 17, TotalTokens: 127}, RoundTrips: 2},
	}
}

// BenchmarkEnvelopeEncode measures the stored form of a turn's six journal
// events: NewEnvelope then Encode for each. One op is one turn.
func BenchmarkEnvelopeEncode(b *testing.B) {
	events := turnEvents()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		for i, ev := range events {
			env, err := messages.NewEnvelope(uint64(i+1), at, ev)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := env.Encode(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkEnvelopeDecode measures reading a turn's six stored entries
// back: checksum, envelope and event. One op is one turn.
func BenchmarkEnvelopeDecode(b *testing.B) {
	events := turnEvents()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	stored := make([][]byte, len(events))
	for i, ev := range events {
		env, err := messages.NewEnvelope(uint64(i+1), at, ev)
		if err != nil {
			b.Fatal(err)
		}
		if stored[i], err = env.Encode(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, raw := range stored {
			if _, _, err := messages.DecodeEnvelope(uint64(i+1), raw); err != nil {
				b.Fatal(err)
			}
		}
	}
}
