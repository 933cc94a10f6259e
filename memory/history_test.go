package memory_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// fold applies events with seqs 1, 2, 3, ... to a fresh state.
func fold(t *testing.T, evs ...messages.JournalEvent) *memory.State {
	t.Helper()
	st := &memory.State{}
	apply(t, st, evs...)
	return st
}

func apply(t *testing.T, st *memory.State, evs ...messages.JournalEvent) {
	t.Helper()
	for _, ev := range evs {
		env := messages.Envelope{Seq: st.Seq + 1, At: time.Unix(int64(st.Seq), 0)}
		if err := st.Apply(env, ev); err != nil {
			t.Fatalf("Apply(%T): %v", ev, err)
		}
	}
}

func calls(ids ...string) []messages.ToolCall {
	out := make([]messages.ToolCall, len(ids))
	for i, id := range ids {
		out[i] = messages.ToolCall{ID: id, Name: "tool_" + id, Arguments: "{}"}
	}
	return out
}

func asst(turn int, text string, ids ...string) messages.AssistantMessage {
	m := messages.AssistantText(text)
	if len(ids) > 0 {
		m.ToolCalls = calls(ids...)
	}
	return messages.AssistantMessage{Turn: turn, Message: m, Usage: messages.Usage{TotalTokens: 10}, Cost: 0.25}
}

func userMsg(turn int, text string) messages.UserMessage {
	return messages.UserMessage{Turn: turn, TurnID: fmt.Sprintf("id-%d", turn), Message: messages.UserText(text)}
}

func result(turn int, id, content string) messages.ToolResult {
	return messages.ToolResult{Turn: turn, CallID: id, Name: "tool_" + id, Content: content}
}

func assistantCalling(ids ...string) messages.Message {
	return messages.Message{Role: messages.RoleAssistant, ToolCalls: calls(ids...)}
}

func TestStateMessages(t *testing.T) {
	tests := []struct {
		name string
		evs  []messages.JournalEvent
		want []messages.Message
	}{
		{
			name: "results arrive out of order and are kept in call order",
			evs: []messages.JournalEvent{
				userMsg(0, "q"), asst(0, "", "a", "b", "c"),
				result(0, "c", "C"), result(0, "a", "A"), result(0, "b", "B"),
				asst(0, "done"),
			},
			want: []messages.Message{
				messages.UserText("q"), assistantCalling("a", "b", "c"),
				messages.ToolResultMessage("a", "A"), messages.ToolResultMessage("b", "B"), messages.ToolResultMessage("c", "C"),
				messages.AssistantText("done"),
			},
		},
		{
			name: "a dangling call after a crash is answered as interrupted",
			evs: []messages.JournalEvent{
				userMsg(0, "q"), asst(0, "", "a", "b"),
				messages.ToolCallStarted{Turn: 0, CallID: "a", Name: "tool_a"},
				messages.ToolCallStarted{Turn: 0, CallID: "b", Name: "tool_b"},
				result(0, "b", "B"),
				messages.Activated{Activation: 2},
			},
			want: []messages.Message{
				messages.UserText("q"), assistantCalling("a", "b"),
				messages.ToolResultMessage("a", memory.InterruptedResult), messages.ToolResultMessage("b", "B"),
			},
		},
		{
			name: "a cancelled turn's calls are interrupted and the next turn follows them",
			evs: []messages.JournalEvent{
				userMsg(0, "q"), asst(0, "", "a"),
				messages.TurnCancelled{Turn: 0, Reason: "user"},
				userMsg(1, "again"), asst(1, "ok"),
				result(0, "a", "late result"),
			},
			want: []messages.Message{
				messages.UserText("q"), assistantCalling("a"),
				messages.ToolResultMessage("a", memory.InterruptedResult),
				messages.UserText("again"), messages.AssistantText("ok"),
			},
		},
		{
			name: "a duplicate result is stored once",
			evs: []messages.JournalEvent{
				userMsg(0, "q"), asst(0, "", "a"), result(0, "a", "first"), result(0, "a", "second"),
			},
			want: []messages.Message{messages.UserText("q"), assistantCalling("a"), messages.ToolResultMessage("a", "first")},
		},
		{
			name: "system and developer messages are never stored",
			evs: []messages.JournalEvent{
				messages.UserMessage{Message: messages.SystemText("sys")},
				messages.UserMessage{Message: messages.DeveloperText("dev")},
				userMsg(0, "q"),
				messages.AssistantMessage{Message: messages.SystemText("not an assistant")},
				messages.Compacted{Kind: "summary", Through: 1, Messages: []messages.Message{messages.SystemText("x")}},
			},
			want: []messages.Message{messages.UserText("q")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := fold(t, tc.evs...)
			got := st.Messages(memory.ViewOptions{})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Messages (-want +got):\n%s", diff)
			}
			if err := messages.Validate(got); err != nil {
				t.Errorf("Messages does not validate: %v", err)
			}
		})
	}
}

func TestStateOpenTurnForResume(t *testing.T) {
	st := fold(t,
		messages.Activated{Activation: 1, Node: "n"},
		userMsg(0, "q"), asst(0, "", "a", "b", "c"),
		messages.ToolCallStarted{Turn: 0, CallID: "a", Name: "tool_a"},
		result(0, "a", "A"),
		messages.ToolCallStarted{Turn: 0, CallID: "b", Name: "tool_b"},
		messages.ApprovalRequested{Turn: 0, CallID: "c", Tool: "tool_c", Reason: "shell"},
		messages.SubAgentSpawned{Turn: 0, CallID: "b", Child: "child-1", Task: "t"},
	)
	o := st.Open
	if o == nil {
		t.Fatal("no open turn")
	}
	if o.Turn != 0 || o.TurnID != "id-0" || o.RoundTrips != 1 {
		t.Errorf("open turn = %d %q %d round trips", o.Turn, o.TurnID, o.RoundTrips)
	}
	if diff := cmp.Diff(calls("b", "c"), o.Pending); diff != "" {
		t.Errorf("Pending (-want +got):\n%s", diff)
	}
	if !o.WasStarted("b") || o.WasStarted("c") {
		t.Errorf("WasStarted(b, c) = %v, %v; want true, false", o.WasStarted("b"), o.WasStarted("c"))
	}
	if o.Approvals["c"].Decision != memory.DecisionPending {
		t.Errorf("approval of c = %+v, want pending", o.Approvals["c"])
	}
	if o.SubAgents["b"].Spawned.Child != "child-1" || o.SubAgents["b"].Finished != nil {
		t.Errorf("sub-agent of b = %+v", o.SubAgents["b"])
	}
	apply(t, st,
		messages.ApprovalGranted{CallID: "c", By: "alice"},
		messages.SubAgentFinished{CallID: "b", Child: "child-1", Outcome: messages.OutcomeCompleted, Usage: messages.Usage{TotalTokens: 100}, Cost: 2},
		result(0, "c", "C"), result(0, "b", "B"),
	)
	if o.Approvals["c"].Decision != memory.DecisionGranted || o.Approvals["c"].By != "alice" {
		t.Errorf("approval of c = %+v, want granted by alice", o.Approvals["c"])
	}
	if len(o.Pending) != 0 || len(o.Results) != 3 || o.SubAgents["b"].Finished == nil {
		t.Errorf("after results: pending %v, %d results, sub-agent %+v", o.Pending, len(o.Results), o.SubAgents["b"])
	}
	if st.Usage.TotalTokens != 110 || st.Cost != 2.25 {
		t.Errorf("session usage = %d tokens, cost %v; want 110, 2.25", st.Usage.TotalTokens, st.Cost)
	}
	apply(t, st, messages.TurnCompleted{Turn: 0, TurnID: "id-0", Outcome: messages.OutcomeCompleted})
	if st.Open != nil || st.Turn != 1 {
		t.Errorf("after TurnCompleted: open %v, next turn %d", st.Open, st.Turn)
	}
	apply(t, st, messages.ApprovalDenied{CallID: "zz"}, messages.SubAgentFinished{CallID: "zz"})
}

func TestStateTurnIDsBounded(t *testing.T) {
	st := &memory.State{}
	for i := range memory.MaxTurnIDs + 10 {
		apply(t, st, userMsg(i, "q"), messages.TurnCompleted{Turn: i, TurnID: fmt.Sprintf("id-%d", i)})
	}
	if len(st.TurnIDs) != memory.MaxTurnIDs {
		t.Errorf("len(TurnIDs) = %d, want %d", len(st.TurnIDs), memory.MaxTurnIDs)
	}
	if _, ok := st.TurnIDs["id-0"]; ok {
		t.Error("the oldest turn id was kept")
	}
	if ref, ok := st.TurnIDs[fmt.Sprintf("id-%d", memory.MaxTurnIDs+9)]; !ok || ref.Turn != memory.MaxTurnIDs+9 {
		t.Errorf("newest turn id = %d, %v", ref.Turn, ok)
	}
	if st.Turn != memory.MaxTurnIDs+10 {
		t.Errorf("Turn = %d, want %d", st.Turn, memory.MaxTurnIDs+10)
	}
}

func TestStateApplyOutOfOrder(t *testing.T) {
	st := fold(t, userMsg(0, "q"))
	for _, seq := range []uint64{0, 1} {
		if err := st.Apply(messages.Envelope{Seq: seq}, userMsg(0, "x")); !errors.Is(err, memory.ErrOutOfOrder) {
			t.Errorf("Apply(seq %d) error = %v, want ErrOutOfOrder", seq, err)
		}
	}
	if err := st.Apply(messages.Envelope{Seq: 5}, nil); !errors.Is(err, memory.ErrInvalidEvent) {
		t.Errorf("Apply(nil) error = %v, want ErrInvalidEvent", err)
	}
	if len(st.History) != 1 {
		t.Errorf("rejected entries changed the history: %v", st.History)
	}
}

func TestStateWindow(t *testing.T) {
	st := fold(t,
		userMsg(0, "q0"), asst(0, "", "a", "b"), result(0, "a", "A"), result(0, "b", "B"), asst(0, "a0"),
		messages.TurnCompleted{Turn: 0}, userMsg(1, "q1"), asst(1, "a1"),
	)
	full := st.Messages(memory.ViewOptions{})
	tests := []struct {
		window int
		want   []messages.Message
	}{
		{0, full},
		{100, full},
		{3, full[len(full)-3:]},
		// The last 5 would start with the tool messages "A" and "B": they
		// are dropped rather than cut from their assistant message.
		{5, full[len(full)-3:]},
		{6, full[len(full)-6:]},
		{7, full},
	}
	for _, tc := range tests {
		got := st.Messages(memory.ViewOptions{Window: tc.window})
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Window %d (-want +got):\n%s", tc.window, diff)
		}
		if err := messages.Validate(got); err != nil {
			t.Errorf("Window %d does not validate: %v", tc.window, err)
		}
		if len(got) > max(tc.window, 0) && tc.window > 0 {
			t.Errorf("Window %d returned %d messages", tc.window, len(got))
		}
	}
}

func TestStateCompacted(t *testing.T) {
	st := fold(t,
		userMsg(0, "q0"), asst(0, "", "a", "b"), result(0, "b", "B"), result(0, "a", "A"), asst(0, "a0"),
		messages.TurnCompleted{Turn: 0}, userMsg(1, "q1"), asst(1, "a1"),
	)
	if diff := cmp.Diff([]uint64{1, 2, 4, 4, 5, 7, 8}, st.HistorySeq); diff != "" {
		t.Fatalf("HistorySeq (-want +got):\n%s", diff)
	}
	summary := []messages.Message{messages.UserText("summary")}
	// A cut between the two results of one assistant message is refused.
	if _, err := st.CompactedEvent("summary", memory.Compaction{Replaced: 3, Replacement: summary}, 0, 0); err == nil {
		t.Error("CompactedEvent accepted a cut inside a tool group")
	}
	for _, n := range []int{0, 8} {
		if _, err := st.CompactedEvent("summary", memory.Compaction{Replaced: n}, 0, 0); !errors.Is(err, memory.ErrNothingToCompact) {
			t.Errorf("CompactedEvent(Replaced %d) error = %v, want ErrNothingToCompact", n, err)
		}
	}
	ev, err := st.CompactedEvent("summary", memory.Compaction{Replaced: 5, Replacement: summary}, 100, 10)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Through != 5 || ev.Kind != "summary" || ev.TokensBefore != 100 || ev.TokensAfter != 10 {
		t.Errorf("event = %+v", ev)
	}
	apply(t, st, ev)
	want := []messages.Message{messages.UserText("summary"), messages.UserText("q1"), messages.AssistantText("a1")}
	if diff := cmp.Diff(want, st.Messages(memory.ViewOptions{})); diff != "" {
		t.Errorf("after compaction (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint64{5, 7, 8}, st.HistorySeq); diff != "" {
		t.Errorf("HistorySeq after compaction (-want +got):\n%s", diff)
	}
	// A second compaction builds on the first.
	ev, err = st.CompactedEvent("summary", memory.Compaction{Replaced: 2, Replacement: []messages.Message{messages.UserText("s2")}}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, st, ev)
	if diff := cmp.Diff([]messages.Message{messages.UserText("s2"), messages.AssistantText("a1")}, st.History); diff != "" {
		t.Errorf("after second compaction (-want +got):\n%s", diff)
	}
}

func TestRepair(t *testing.T) {
	tests := []struct {
		name string
		in   []messages.Message
		want []messages.Message
	}{
		{"empty", nil, []messages.Message{}},
		{
			"orphan tool message dropped",
			[]messages.Message{messages.ToolResultMessage("x", "X"), messages.UserText("q")},
			[]messages.Message{messages.UserText("q")},
		},
		{
			"result for another assistant's call dropped",
			[]messages.Message{assistantCalling("a"), messages.ToolResultMessage("z", "Z"), messages.ToolResultMessage("a", "A")},
			[]messages.Message{assistantCalling("a"), messages.ToolResultMessage("a", "A")},
		},
		{
			"tool message after a plain assistant message dropped",
			[]messages.Message{messages.AssistantText("hi"), messages.ToolResultMessage("a", "A")},
			[]messages.Message{messages.AssistantText("hi")},
		},
		{
			"results reordered and missing ones filled",
			[]messages.Message{assistantCalling("a", "b", "c"), messages.ToolResultMessage("c", "C"), messages.SystemText("s"), messages.UserText("u")},
			[]messages.Message{
				assistantCalling("a", "b", "c"), messages.ToolResultMessage("a", memory.InterruptedResult),
				messages.ToolResultMessage("b", memory.InterruptedResult), messages.ToolResultMessage("c", "C"), messages.UserText("u"),
			},
		},
		{
			"a call answered twice keeps its first answer",
			[]messages.Message{assistantCalling("a", "b"), messages.ToolResultMessage("b", "B1"), messages.ToolResultMessage("a", "A"), messages.ToolResultMessage("b", "B2")},
			[]messages.Message{assistantCalling("a", "b"), messages.ToolResultMessage("a", "A"), messages.ToolResultMessage("b", "B1")},
		},
	}
	for n := range []int{8, 24} {
		// Runs of results short and long enough for either way of
		// matching them to their calls, answered in reverse order.
		n = []int{8, 24}[n]
		ids := make([]string, n)
		in := []messages.Message{{}}
		want := []messages.Message{{}}
		for i := range ids {
			ids[i] = fmt.Sprintf("c%02d", i)
		}
		in[0], want[0] = assistantCalling(ids...), assistantCalling(ids...)
		for i := n - 1; i >= 0; i-- {
			if i%3 != 0 {
				in = append(in, messages.ToolResultMessage(ids[i], "R"+ids[i]))
			}
		}
		for i, id := range ids {
			r := messages.ToolResultMessage(id, "R"+id)
			if i%3 == 0 {
				r = messages.ToolResultMessage(id, memory.InterruptedResult)
			}
			want = append(want, r)
		}
		tests = append(tests, struct {
			name string
			in   []messages.Message
			want []messages.Message
		}{fmt.Sprintf("%d calls answered in reverse, a third missing", n), in, want})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, memory.Repair(tc.in)); diff != "" {
				t.Errorf("Repair (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkRepair measures what a model request pays to build its
// messages from a session's history: sixteen turns of a question, a reply
// calling one tool, its result and the answer; and one turn whose reply
// called 64 tools.
func BenchmarkRepair(b *testing.B) {
	var chat []messages.Message
	for i := range 16 {
		id := fmt.Sprintf("call_%d", i)
		chat = append(chat, messages.UserText("q"), assistantCalling(id), messages.ToolResultMessage(id, "R"), messages.AssistantText("a"))
	}
	ids := make([]string, 64)
	for i := range ids {
		ids[i] = fmt.Sprintf("call_%d", i)
	}
	fanOut := []messages.Message{messages.UserText("q"), assistantCalling(ids...)}
	for _, id := range ids {
		fanOut = append(fanOut, messages.ToolResultMessage(id, "R"))
	}
	for name, h := range map[string][]messages.Message{"16 turns": chat, "64 calls": fanOut} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(memory.Repair(h)) != len(h) {
					b.Fatal("repair changed a well-formed history")
				}
			}
		})
	}
}

func TestValidateEvent(t *testing.T) {
	tests := []struct {
		ev   messages.JournalEvent
		okay bool
	}{
		{userMsg(0, "q"), true},
		{asst(0, "a"), true},
		{result(0, "a", "x"), true},
		{messages.TurnCompleted{}, true},
		{messages.Compacted{Messages: []messages.Message{messages.UserText("s"), assistantCalling("a"), messages.ToolResultMessage("a", "x")}}, true},
		{nil, false},
		{messages.Activated{Activation: 1}, false},
		{messages.UserMessage{Message: messages.SystemText("s")}, false},
		{messages.AssistantMessage{Message: messages.ToolResultMessage("a", "x")}, false},
		{messages.ToolResult{}, false},
		{messages.Compacted{Messages: []messages.Message{messages.DeveloperText("d")}}, false},
	}
	for i, tc := range tests {
		err := memory.ValidateEvent(tc.ev)
		if (err == nil) != tc.okay {
			t.Errorf("case %d (%T): error = %v, want ok=%v", i, tc.ev, err, tc.okay)
		}
		if err != nil && !errors.Is(err, memory.ErrInvalidEvent) {
			t.Errorf("case %d: error %v does not wrap ErrInvalidEvent", i, err)
		}
	}
}
