package memory_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// transcriptJournal journals one turn with two parallel tool calls (one
// failing), then a compaction that the transcript must ignore.
func transcriptJournal(t *testing.T) memory.Journal {
	t.Helper()
	s := openStore(t, "")
	t.Cleanup(func() { _ = s.Close() })
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilityNone, Clock: func() time.Time { return at }})
	act, tail, err := j.Activate(t.Context(), "s1", "test")
	if err != nil {
		t.Fatal(err)
	}
	calls := []messages.ToolCall{
		{ID: "c1", Name: "read_file", Arguments: `{"path":"go.mod"}`},
		{ID: "c2", Name: "read_file", Arguments: `{bad`},
	}
	events := []messages.JournalEvent{
		messages.UserMessage{Turn: 0, TurnID: "t0", Message: messages.UserText("read go.mod")},
		messages.AssistantMessage{Turn: 0, Model: "m", Message: messages.Message{Role: messages.RoleAssistant, Content: messages.Text("Reading."), ToolCalls: calls}},
		messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "read_file", Arguments: calls[0].Arguments},
		messages.ToolCallStarted{Turn: 0, CallID: "c2", Name: "read_file", Arguments: calls[1].Arguments},
		messages.ToolResult{Turn: 0, CallID: "c1", Name: "read_file", Content: "module x\n"},
		messages.ToolResult{Turn: 0, CallID: "c2", Name: "read_file", Content: "bad arguments", IsError: true},
		messages.AssistantMessage{Turn: 0, Model: "m", Message: messages.AssistantText("It is module x.")},
		messages.TurnCompleted{Turn: 0, TurnID: "t0", Outcome: messages.OutcomeCompleted},
	}
	if _, err := j.Append(t.Context(), "s1", act, tail, events...); err != nil {
		t.Fatal(err)
	}
	return j
}

func TestTranscript(t *testing.T) {
	j := transcriptJournal(t)
	entries, err := memory.Transcript(t.Context(), j, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, e := range entries {
		roles = append(roles, string(e.Role)+":"+e.Text())
	}
	want := []string{"user:read go.mod", "assistant:Reading.", "tool:module x\n", "tool:bad arguments", "assistant:It is module x."}
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if !entries[3].IsError || entries[3].ToolCallID != "c2" || entries[3].Name != "read_file" {
		t.Errorf("failed tool result = %+v", entries[3])
	}
	if _, err := memory.Transcript(t.Context(), j, "nope"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("unknown session: err = %v, want ErrNotFound", err)
	}
}

func TestWriteJSONL(t *testing.T) {
	entries, err := memory.Transcript(t.Context(), transcriptJournal(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := memory.WriteJSONL(&b, entries); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5:\n%s", len(lines), b.String())
	}
	wantFirst := `{"seq":2,"turn":0,"time":"2025-01-02T03:04:05Z","role":"user","content":"read go.mod"}`
	if lines[0] != wantFirst {
		t.Errorf("line 1:\n got %s\nwant %s", lines[0], wantFirst)
	}
	var back memory.TranscriptEntry
	if err := json.Unmarshal([]byte(lines[1]), &back); err != nil || len(back.ToolCalls) != 2 || back.Model != "m" {
		t.Errorf("line 2 = %s (decoded %+v, %v)", lines[1], back, err)
	}
}

func TestToShareGPT(t *testing.T) {
	entries, err := memory.Transcript(t.Context(), transcriptJournal(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	got := memory.ToShareGPT(entries)
	want := memory.ShareGPT{Conversations: []memory.ShareGPTTurn{
		{From: "human", Value: "read go.mod"},
		{From: "gpt", Value: "Reading.\n<tool_call>\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"go.mod\"}}\n</tool_call>\n" +
			"<tool_call>\n{\"name\":\"read_file\",\"arguments\":\"{bad\"}\n</tool_call>"},
		{From: "tool", Value: "<tool_response>\n{\"name\":\"read_file\",\"content\":\"module x\\n\"}\n</tool_response>"},
		{From: "tool", Value: "<tool_response>\n{\"name\":\"read_file\",\"content\":\"bad arguments\"}\n</tool_response>"},
		{From: "gpt", Value: "It is module x."},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	var b bytes.Buffer
	if err := memory.WriteShareGPT(&b, entries); err != nil {
		t.Fatal(err)
	}
	var back memory.ShareGPT
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || !cmp.Equal(back, want) {
		t.Errorf("WriteShareGPT round trip: %v\n%s", err, b.String())
	}
}
