package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// TestSessionsList_DamagedSession lists a data directory where one journal
// is damaged: the others are listed, and the damaged one is shown as such,
// naming agcore doctor.
func TestSessionsList_DamagedSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	j, err := memory.NewJournal(store, memory.JournalOptions{}) // no snapshot: loading reads every entry
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"good", "bad", "fine"} {
		if _, err := j.Append(t.Context(), id, 0, 0,
			messages.UserMessage{Turn: 0, TurnID: "t0", Message: messages.UserText("release it")},
			messages.AssistantMessage{Turn: 0, Message: messages.AssistantText("Released.")},
			messages.TurnCompleted{Turn: 0, TurnID: "t0", Outcome: messages.OutcomeCompleted}); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(j.Close(), store.Close()); err != nil {
		t.Fatal(err)
	}
	alterEntry(t, dir, "bad", 2, "Released")

	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "sessions", "list")
	if code != exitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"good ", "fine ", "bad ", "damaged", "agcore doctor"} {
		if !strings.Contains(stdout+stderr, want) {
			t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", want, stdout, stderr)
		}
	}
	for line := range strings.Lines(stdout) {
		if strings.HasPrefix(line, "good ") && !strings.Contains(line, "release it") {
			t.Errorf("the sound session's line lost its details: %q", line)
		}
	}

	code, stdout, stderr = runCLI(t.Context(), t, nil, "--data-dir", dir, "sessions", "list", "--json")
	if code != exitOK {
		t.Fatalf("--json: exit code %d\n%s\n%s", code, stdout, stderr)
	}
	damaged := map[string]string{}
	for line := range strings.Lines(stdout) {
		var s struct {
			Session string `json:"session"`
			Damaged string `json:"damaged"`
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		damaged[s.Session] = s.Damaged
	}
	if len(damaged) != 3 || damaged["good"] != "" || damaged["fine"] != "" || !strings.Contains(damaged["bad"], "seq 2") {
		t.Errorf("--json lines say %v", damaged)
	}
}

// TestSessionsShow_InterruptedCalls shows a session whose turn was
// cancelled while a tool ran: the call is shown answered as interrupted,
// as the model is told, not left without a reply. A call of a turn that
// is still open is shown as waiting for the session to resume.
func TestSessionsShow_InterruptedCalls(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	j, err := memory.NewJournal(store, memory.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	call := func(id string) messages.ToolCall {
		return messages.ToolCall{ID: id, Name: "bash", Arguments: `{"command":"sleep 300"}`}
	}
	if _, err := j.Append(t.Context(), "s1", 0, 0,
		messages.UserMessage{Turn: 0, TurnID: "t0", Message: messages.UserText("run the slow command")},
		messages.AssistantMessage{Turn: 0, Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call("c1")}}},
		messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "bash", Arguments: call("c1").Arguments},
		messages.TurnCancelled{Turn: 0, TurnID: "t0", Reason: "cancelled by the user"},
		messages.UserMessage{Turn: 1, TurnID: "t1", Message: messages.UserText("again")},
		messages.AssistantMessage{Turn: 1, Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call("c2")}}},
		messages.ToolCallStarted{Turn: 1, CallID: "c2", Name: "bash", Arguments: call("c2").Arguments},
	); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "sessions", "show", "s1")
	if code != exitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"  tool c1: " + memory.InterruptedResult + "\n",
		"  tool c2: (no result yet: the turn resumes when the session is next opened)\n",
		"open turn 2 ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// TestDescribe_TurnsFromOne checks that the timeline numbers turns from 1,
// as every user-facing output does; the journal keeps 0-based indexes.
func TestDescribe_TurnsFromOne(t *testing.T) {
	tests := []struct {
		ev   messages.JournalEvent
		want string
	}{
		{messages.UserMessage{Turn: 0, Message: messages.UserText("hi")}, `turn 1: "hi"`},
		{messages.UserMessage{Turn: 0, Message: messages.UserText("hi"), TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331"},
			`turn 1: "hi" · trace 0af7651916cd43dd8448eb211c80319c span b7ad6b7169203331`},
		{messages.AssistantMessage{Turn: 0, Message: messages.AssistantText("hello")}, `turn 1: "hello" · 0 tokens`},
		{messages.TurnCompleted{Turn: 1, Outcome: messages.OutcomeCompleted, RoundTrips: 2}, "turn 2 completed · 2 round trips · 0 tokens"},
		{messages.TurnCancelled{Turn: 2, Reason: "stop"}, "turn 3: stop"},
	}
	for _, tt := range tests {
		if got := describe(tt.ev); got != tt.want {
			t.Errorf("describe(%T) = %q, want %q", tt.ev, got, tt.want)
		}
	}
}
