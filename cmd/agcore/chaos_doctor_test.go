package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// TestDoctor_BrokenInvariant: a journal whose entries are all sound (each
// matches its checksum and decodes) but whose tool call is answered twice
// breaks a recovery invariant: doctor names the session, the entry and the
// invariant, and exits 1.
func TestDoctor_BrokenInvariant(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	j, err := memory.NewJournal(store, memory.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	call := messages.ToolCall{ID: "c1", Name: "charge", Arguments: `{}`}
	if _, err := j.Append(t.Context(), "twice", 0, 0,
		messages.UserMessage{Turn: 0, TurnID: "t0", Message: messages.UserText("pay")},
		messages.AssistantMessage{Turn: 0, Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call}}},
		messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "charge", Arguments: call.Arguments},
		messages.ToolResult{Turn: 0, CallID: "c1", Name: "charge", Content: "charged"},
		messages.ToolResult{Turn: 0, CallID: "c1", Name: "charge", Content: "charged"},
		messages.AssistantMessage{Turn: 0, Message: messages.AssistantText("Paid.")},
		messages.TurnCompleted{Turn: 0, TurnID: "t0", Outcome: messages.OutcomeCompleted}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "doctor")
	if code != exitError || !strings.Contains(stdout, "session twice seq 5: tool_answered_once: call c1 of turn 0 (charge) answered 2 times") {
		t.Fatalf("doctor on a journal that answers a call twice: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "recovery invariants") {
		t.Errorf("stderr does not say what is wrong:\n%s", stderr)
	}
	code, stdout, _ = runCLI(t.Context(), t, nil, "--data-dir", dir, "doctor", "--json")
	var rep doctorReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout)
	}
	if code != exitError || len(rep.Invariants) != 1 || rep.Invariants[0].Invariant != chaos.InvToolAnswered || rep.Invariants[0].Seq != 5 {
		t.Fatalf("--json report = %+v (exit %d)", rep, code)
	}
}
