package memory_test

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// A session journals a turn whose tool call never finished; after a
// restart the folded state answers the call as interrupted.
func ExampleBadgerJournal() {
	ctx := context.Background()
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		panic(err)
	}
	act, tail, _ := j.Activate(ctx, "s1", "node-a")
	call := messages.ToolCall{ID: "c1", Name: "fetch", Arguments: `{"url":"https://example.com"}`}
	reply := messages.AssistantMessage{Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call}}}
	tail, _ = j.Append(ctx, "s1", act, tail,
		messages.UserMessage{TurnID: "t-1", Message: messages.UserText("what is on example.com?")},
		reply,
		messages.ToolCallStarted{CallID: "c1", Name: "fetch", Arguments: call.Arguments},
	)

	// The process dies here. The next activation fences the old writer.
	act2, _, _ := j.Activate(ctx, "s1", "node-b")
	_, err = j.Append(ctx, "s1", act, tail+1, messages.ToolResult{CallID: "c1", Content: "late"})
	fmt.Println("old writer:", err != nil)

	st, _ := j.Load(ctx, "s1")
	fmt.Println("activation:", act2, "open turn:", st.Open.TurnID, "started:", st.Open.WasStarted("c1"))
	for _, m := range st.Messages(memory.ViewOptions{}) {
		fmt.Printf("%s %q\n", m.Role, m.Text())
	}
	// Output:
	// old writer: true
	// activation: 2 open turn: t-1 started: true
	// user "what is on example.com?"
	// assistant ""
	// tool "interrupted: the tool call did not complete"
}

func ExampleSessionMemory_Snapshot() {
	ctx := context.Background()
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	m := memory.NewSessionMemory(store, memory.SessionMemoryOptions{})
	_ = m.Set(ctx, "s1", "lang", "Go")
	_ = m.Set(ctx, "s1", "design", "PostgreSQL")
	snap, _ := m.Snapshot(ctx, "s1")
	fmt.Println(snap)
	// Output:
	// <session-context>
	// design: PostgreSQL
	// lang: Go
	// </session-context>
}
