package memory_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

func TestStateOpenTurnKeepsItsOutputAndCountsCorrections(t *testing.T) {
	spec := &messages.OutputSpec{Name: "record", Schema: json.RawMessage(`{"type":"object","properties":{}}`),
		Mode: messages.OutputAnswerTool, Retries: 2}
	first := userMsg(0, "extract")
	first.Output = spec
	answer := func(id string) messages.AssistantMessage {
		a := asst(0, "")
		a.Message.ToolCalls = []messages.ToolCall{{ID: id, Name: messages.AnswerTool, Arguments: `{}`}}
		return a
	}
	st := fold(t,
		first,
		answer("a1"),
		messages.ToolResult{Turn: 0, CallID: "a1", Name: messages.AnswerTool, Content: "field x", IsError: true},
		asst(0, "not JSON"),
		messages.UserMessage{Turn: 0, TurnID: "id-0", Message: messages.UserText("reply with the answer tool")},
	)
	o := st.Open
	if o == nil {
		t.Fatal("no open turn")
	}
	if diff := cmp.Diff(spec, o.Output); diff != "" {
		t.Errorf("Output (-want +got):\n%s", diff)
	}
	if o.Corrections != 2 {
		t.Errorf("Corrections = %d, want 2 (one answer tool error, one user message sent back)", o.Corrections)
	}
	if st.Turn != 1 {
		t.Errorf("next turn = %d, want 1: a correction does not start a turn", st.Turn)
	}
}

// A journal written before outputs existed reads as plain turns.
func TestStateReadsEntriesWithoutOutput(t *testing.T) {
	for _, raw := range []string{
		`{"turn_id":"t","turn":0,"message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`,
	} {
		var um messages.UserMessage
		if err := json.Unmarshal([]byte(raw), &um); err != nil {
			t.Fatal(err)
		}
		st := &memory.State{}
		apply(t, st, um, messages.UserMessage{Turn: 0, TurnID: "t", Message: messages.UserText("more")})
		if st.Open == nil || st.Open.Output != nil || st.Open.Corrections != 0 {
			t.Errorf("open turn = %+v, want a plain turn without corrections", st.Open)
		}
	}
	var tc messages.TurnCompleted
	if err := json.Unmarshal([]byte(`{"turn":0,"outcome":"completed","usage":{}}`), &tc); err != nil {
		t.Fatal(err)
	}
	if tc.Output != nil || tc.OutputFailure != nil {
		t.Errorf("old TurnCompleted decoded with an output: %+v", tc)
	}
}
