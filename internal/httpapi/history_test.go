package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// TestHistory_AsTheModelSawIt journals a turn whose tool call was cut off
// by a cancellation and a turn still running with a call in flight: the
// first call is answered as interrupted, as the model was told, and the
// second has no answer yet.
func TestHistory_AsTheModelSawIt(t *testing.T) {
	e := newEnv(t, envOptions{script: okScript()})
	act, tail, err := e.journal.Activate(t.Context(), "old", "test")
	if err != nil {
		t.Fatal(err)
	}
	call := func(id string) messages.Message {
		return messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"a"}`}}}
	}
	if _, err := e.journal.Append(t.Context(), "old", act, tail,
		messages.UserMessage{Turn: 0, TurnID: "t0", Message: messages.UserText("read a")},
		messages.AssistantMessage{Turn: 0, Message: call("c1")},
		messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "read_file", Arguments: `{"path":"a"}`},
		messages.TurnCancelled{Turn: 0, TurnID: "t0", Reason: "cancelled by the user"},
		messages.UserMessage{Turn: 1, TurnID: "t1", Message: messages.UserText("read it again")},
		messages.AssistantMessage{Turn: 1, Message: call("c2")},
	); err != nil {
		t.Fatal(err)
	}
	resp, body := e.do(http.MethodGet, "/v1/sessions/old/history", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("history: %d %s", resp.StatusCode, body)
	}
	h := decode[httpapi.History](t, body)
	var roles []string
	for _, m := range h.Messages {
		roles = append(roles, string(m.Role)+":"+m.ToolCallID)
	}
	if got, want := strings.Join(roles, " "), "user: assistant: tool:c1 user: assistant:"; got != want {
		t.Fatalf("history roles %q, want %q", got, want)
	}
	if h.Messages[2].Text() != memory.InterruptedResult {
		t.Errorf("the cut-off call is answered %q, want %q", h.Messages[2].Text(), memory.InterruptedResult)
	}
}
