package chaos_test

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// A journal in which a non-idempotent charge was started twice for one
// call, as a runtime that re-ran it after a restart would leave it.
func ExampleCheck() {
	ctx := context.Background()
	store, _ := memory.Open(memory.Options{InMemory: true})
	defer store.Close()
	j, _ := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	defer j.Close()

	call := messages.ToolCall{ID: "c1", Name: "charge", Arguments: `{}`}
	_, _ = j.Append(ctx, "order-7", 0, 0,
		messages.UserMessage{Turn: 0, TurnID: "t0", Message: messages.UserText("pay order 7")},
		messages.AssistantMessage{Turn: 0, Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call}}},
		messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "charge"},
		messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "charge"},
		messages.ToolResult{Turn: 0, CallID: "c1", Name: "charge", Content: "charged"},
		messages.AssistantMessage{Turn: 0, Message: messages.AssistantText("Paid.")},
		messages.TurnCompleted{Turn: 0, TurnID: "t0", Outcome: messages.OutcomeCompleted})

	rep, err := chaos.Check(ctx, j, chaos.CheckOptions{
		Acknowledged: []chaos.Ack{{Session: "order-7", TurnID: "t0", Text: "pay order 7"}},
		// Only read-only lookups may run twice.
		Rerunnable: func(tool string) bool { return tool == "lookup" },
		Settled:    true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.OK())
	for _, v := range rep.Violations {
		fmt.Println(v)
	}
	// Output:
	// false
	// session order-7 seq 4: tool_started_once: call c1 of turn 0 started again, but charge is neither idempotent nor read-only
}
