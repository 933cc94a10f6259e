package chaos_test

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// sliceJournal serves one session's entries from a slice; it implements
// the reading half of memory.Journal.
type sliceJournal struct {
	memory.Journal
	session string
	entries []memory.Entry
}

func (j *sliceJournal) Tail(context.Context, string) (uint64, error) {
	if len(j.entries) == 0 {
		return 0, nil
	}
	return j.entries[len(j.entries)-1].Envelope.Seq, nil
}

func (j *sliceJournal) Sessions(context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) { yield(j.session, nil) }
}

func (j *sliceJournal) Read(_ context.Context, _ string, from uint64) iter.Seq2[memory.Entry, error] {
	return func(yield func(memory.Entry, error) bool) {
		for _, e := range j.entries {
			if e.Envelope.Seq >= from && !yield(e, nil) {
				return
			}
		}
	}
}

func (j *sliceJournal) Load(context.Context, string) (*memory.State, error) {
	st := &memory.State{}
	for _, e := range j.entries {
		if err := st.Apply(e.Envelope, e.Event); err != nil {
			return nil, &memory.EntryError{Session: j.session, Seq: e.Envelope.Seq, Err: err}
		}
	}
	return st, nil
}

// eventsFrom turns fuzz bytes into journal entries: each pair of bytes
// picks an event, its turn and its call, and the sequence numbers may
// skip or repeat.
func eventsFrom(data []byte) []memory.Entry {
	var out []memory.Entry
	seq := uint64(0)
	for i := 0; i+1 < len(data); i += 2 {
		op, arg := data[i], data[i+1]
		turn, call := int(arg%3), fmt.Sprintf("c%d", arg%4)
		var ev messages.JournalEvent
		switch op % 9 {
		case 0:
			ev = messages.UserMessage{Turn: turn, TurnID: fmt.Sprintf("t%d", arg%5), Message: messages.UserText(fmt.Sprintf("m%d", arg%5))}
		case 1:
			ev = messages.AssistantMessage{Turn: turn, Message: messages.Message{Role: messages.RoleAssistant,
				ToolCalls: []messages.ToolCall{{ID: call, Name: []string{"lookup", "charge"}[arg%2], Arguments: "{}"}}}}
		case 2:
			ev = messages.ToolCallStarted{Turn: turn, CallID: call, Name: []string{"lookup", "charge"}[arg%2]}
		case 3:
			ev = messages.ToolResult{Turn: turn, CallID: call, Name: "charge", Content: "ok"}
		case 4:
			ev = messages.AssistantMessage{Turn: turn, Message: messages.AssistantText("done")}
		case 5:
			ev = messages.TurnCompleted{Turn: turn, Outcome: []messages.TurnOutcome{messages.OutcomeCompleted, messages.OutcomeFailed}[arg%2], Reason: "x: server error"}
		case 6:
			ev = messages.TurnCancelled{Turn: turn}
		case 7:
			ev = messages.Activated{Activation: uint64(arg)}
		case 8:
			seq += uint64(arg % 3) // a gap, or a repeat below
			if arg%5 == 0 && seq > 0 {
				seq--
			}
			continue
		}
		seq++
		out = append(out, memory.Entry{Envelope: messages.Envelope{V: messages.EnvelopeVersion, Seq: seq}, Event: ev})
	}
	return out
}

// FuzzCheck runs the checker over arbitrary journals: it never panics,
// every violation says where and what, and a second run finds the same.
func FuzzCheck(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0}, false)
	f.Add([]byte{0, 0, 1, 1, 2, 1, 2, 1, 3, 1, 5, 0, 6, 0}, true)
	f.Add([]byte{8, 2, 0, 3, 8, 5, 3, 9}, true)
	f.Fuzz(func(t *testing.T, data []byte, settled bool) {
		j := &sliceJournal{session: "s", entries: eventsFrom(data)}
		opts := chaos.CheckOptions{Settled: settled, Rerunnable: func(n string) bool { return n == "lookup" },
			Acknowledged: []chaos.Ack{{Session: "s", TurnID: "t1", Text: "m1"}, {Session: "s", TurnID: "t0", Text: "m0"}}}
		rep, err := chaos.Check(context.Background(), j, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range rep.Violations {
			if v.Session != "s" || v.Problem == "" || v.Invariant == "" {
				t.Fatalf("violation %+v does not say where and what", v)
			}
		}
		again, err := chaos.Check(context.Background(), j, opts)
		if err != nil || len(again.Violations) != len(rep.Violations) {
			t.Fatalf("a second check found %d violations, the first %d (%v)", len(again.Violations), len(rep.Violations), err)
		}
	})
}
