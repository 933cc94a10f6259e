package chaos_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// newJournal returns an in-memory journal.
func newJournal(t *testing.T) *memory.BadgerJournal {
	t.Helper()
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// write journals events for session, one append each.
func write(t *testing.T, j memory.Journal, session string, events ...messages.JournalEvent) {
	t.Helper()
	ctx := context.Background()
	act, tail, err := j.Activate(ctx, session, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if tail, err = j.Append(ctx, session, act, tail, ev); err != nil {
			t.Fatal(err)
		}
	}
}

func user(turn int, id, text string) messages.UserMessage {
	return messages.UserMessage{Turn: turn, TurnID: id, Message: messages.UserText(text)}
}

func calls(turn int, names ...string) messages.AssistantMessage {
	m := messages.Message{Role: messages.RoleAssistant}
	for i, n := range names {
		m.ToolCalls = append(m.ToolCalls, messages.ToolCall{ID: "c" + string(rune('1'+i)), Name: n, Arguments: "{}"})
	}
	return messages.AssistantMessage{Turn: turn, Message: m}
}

func started(turn int, id, name string) messages.ToolCallStarted {
	return messages.ToolCallStarted{Turn: turn, CallID: id, Name: name, Arguments: "{}"}
}

func result(turn int, id, name string) messages.ToolResult {
	return messages.ToolResult{Turn: turn, CallID: id, Name: name, Content: "ok"}
}

func answer(turn int, text string) messages.AssistantMessage {
	return messages.AssistantMessage{Turn: turn, Message: messages.AssistantText(text)}
}

func completed(turn int, id string) messages.TurnCompleted {
	return messages.TurnCompleted{Turn: turn, TurnID: id, Outcome: messages.OutcomeCompleted}
}

// goodTurn is a turn that calls lookup and charge and completes.
func goodTurn(turn int, id, text string) []messages.JournalEvent {
	return []messages.JournalEvent{
		user(turn, id, text), calls(turn, "lookup", "charge"),
		started(turn, "c1", "lookup"), started(turn, "c2", "charge"),
		result(turn, "c1", "lookup"), result(turn, "c2", "charge"),
		answer(turn, "done"), completed(turn, id),
	}
}

// rerunnable says lookup may run again, charge may not.
func rerunnable(name string) bool { return name == "lookup" }

func TestCheck_FindsEachViolation(t *testing.T) {
	acks := []chaos.Ack{{Session: "s", TurnID: "t0", Text: "first"}, {Session: "s", TurnID: "t1", Text: "second"}}
	tests := []struct {
		name    string
		events  []messages.JournalEvent
		acks    []chaos.Ack
		settled bool
		want    []chaos.Invariant
	}{
		{"sound", slices.Concat(goodTurn(0, "t0", "first"), goodTurn(1, "t1", "second")), acks, true, nil},
		{"read-only call run again", slices.Concat(goodTurn(0, "t0", "first")[:3], []messages.JournalEvent{started(0, "c1", "lookup")}, goodTurn(0, "t0", "first")[3:]), acks[:1], true, nil},
		{"open turn, not settled", goodTurn(0, "t0", "first")[:4], acks[:1], false, nil},
		{"open turn, settled", goodTurn(0, "t0", "first")[:4], acks[:1], true, []chaos.Invariant{chaos.InvTurnResumable}},
		{"acknowledged message lost", goodTurn(0, "t0", "first"), acks, true, []chaos.Invariant{chaos.InvAckPresent}},
		{"acknowledged messages out of order", slices.Concat(goodTurn(0, "t1", "second"), goodTurn(1, "t0", "first")), acks, true, []chaos.Invariant{chaos.InvAckOrder}},
		{"turn id run twice", slices.Concat(goodTurn(0, "t0", "first"), goodTurn(1, "t0", "first")), acks[:1], true,
			[]chaos.Invariant{chaos.InvTurnIDOnce, chaos.InvAckPresent}},
		{"charge started twice", slices.Concat(goodTurn(0, "t0", "first")[:4], []messages.JournalEvent{started(0, "c2", "charge")}, goodTurn(0, "t0", "first")[4:]), acks[:1], true,
			[]chaos.Invariant{chaos.InvToolStartedOnce}},
		{"call answered twice", slices.Concat(goodTurn(0, "t0", "first")[:6], []messages.JournalEvent{result(0, "c2", "charge")}, goodTurn(0, "t0", "first")[6:]), nil, true,
			[]chaos.Invariant{chaos.InvToolAnswered}},
		// A result after the turn's end also reopens it.
		{"result for no call", slices.Concat(goodTurn(0, "t0", "first"), []messages.JournalEvent{result(0, "c9", "charge")}), nil, true,
			[]chaos.Invariant{chaos.InvToolAnswered, chaos.InvTurnResumable}},
		{"completed with a call unanswered", slices.Concat(goodTurn(0, "t0", "first")[:5], []messages.JournalEvent{answer(0, "done"), completed(0, "t0")}), nil, true,
			[]chaos.Invariant{chaos.InvToolAnswered}},
		{"turn ended twice", slices.Concat(goodTurn(0, "t0", "first"), []messages.JournalEvent{messages.TurnCancelled{Turn: 0, TurnID: "t0"}}), nil, true,
			[]chaos.Invariant{chaos.InvTurnEndedOnce}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJournal(t)
			write(t, j, "s", tt.events...)
			rep, err := chaos.Check(t.Context(), j, chaos.CheckOptions{Acknowledged: tt.acks, Rerunnable: rerunnable, Settled: tt.settled})
			if err != nil {
				t.Fatal(err)
			}
			var got []chaos.Invariant
			for _, v := range rep.Violations {
				if v.Session != "s" || v.Problem == "" {
					t.Errorf("violation %+v does not say where and what", v)
				}
				got = append(got, v.Invariant)
			}
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("violations %v, want invariants %v", rep.Violations, want)
			}
			if rep.OK() != (len(want) == 0) {
				t.Fatalf("OK() = %v with %d violations", rep.OK(), len(rep.Violations))
			}
		})
	}
}

func TestCheck_LocatesTheViolation(t *testing.T) {
	j := newJournal(t)
	evs := slices.Concat(goodTurn(0, "t0", "first")[:4], []messages.JournalEvent{started(0, "c2", "charge")}, goodTurn(0, "t0", "first")[4:])
	write(t, j, "pay-1", evs...)
	rep, err := chaos.Check(t.Context(), j, chaos.CheckOptions{Rerunnable: rerunnable})
	if err != nil {
		t.Fatal(err)
	}
	// Activated is seq 1, then the events in order: the second start of
	// c2 is the sixth entry.
	if len(rep.Violations) != 1 || rep.Violations[0].Seq != 6 || rep.Violations[0].Session != "pay-1" {
		t.Fatalf("violations %+v, want one at pay-1 seq 6", rep.Violations)
	}
	if s := rep.Violations[0].String(); s != "session pay-1 seq 6: tool_started_once: call c2 of turn 0 started again, but charge is neither idempotent nor read-only" {
		t.Fatalf("String() = %q", s)
	}
}

func TestCheck_NilRerunnableAllowsNoRerun(t *testing.T) {
	j := newJournal(t)
	write(t, j, "s", slices.Concat(goodTurn(0, "t0", "first")[:3], []messages.JournalEvent{started(0, "c1", "lookup")}, goodTurn(0, "t0", "first")[3:])...)
	rep, err := chaos.Check(t.Context(), j, chaos.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) != 1 || rep.Violations[0].Invariant != chaos.InvToolStartedOnce {
		t.Fatalf("violations %+v, want lookup's second start", rep.Violations)
	}
}

func TestCheck_CountsTheRun(t *testing.T) {
	j := newJournal(t)
	write(t, j, "a", goodTurn(0, "t0", "first")...)
	write(t, j, "b", user(0, "t0", "x"), messages.TurnCompleted{Turn: 0, TurnID: "t0", Outcome: messages.OutcomeFailed, Reason: "model call failed: chaos: server error (status 500)"})
	write(t, j, "c", user(0, "t0", "x"), messages.TurnCompleted{Turn: 0, TurnID: "t0", Outcome: messages.OutcomeFailed, Reason: "budget spent"})
	rep, err := chaos.Check(t.Context(), j, chaos.CheckOptions{Rerunnable: rerunnable, Settled: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Sessions != 3 || rep.ToolCalls != 2 || rep.Turns["completed"] != 1 || rep.Turns["failed"] != 2 ||
		rep.FailReasons["server error"] != 1 || rep.FailReasons["budget spent"] != 1 {
		t.Fatalf("report %+v", rep)
	}
}

func TestRerunnableIn(t *testing.T) {
	reg := toolsys.NewRegistry(toolsys.Config{})
	reg.MustRegister(newOKTool())
	reg.MustRegister(toolsys.Bridge[struct{}](writeTool{}))
	f := chaos.RerunnableIn(reg)
	if !f("ok") || f("write") || f("missing") {
		t.Fatalf("RerunnableIn: ok %v, write %v, missing %v; want true, false, false", f("ok"), f("write"), f("missing"))
	}
	lying := toolsys.NewRegistry(toolsys.Config{})
	lying.MustRegister(chaos.FalselyIdempotent(toolsys.Bridge[struct{}](writeTool{})))
	if !chaos.RerunnableIn(lying)("write") {
		t.Fatal("FalselyIdempotent does not claim to be idempotent")
	}
}

type writeTool struct{}

func (writeTool) Name() string                   { return "write" }
func (writeTool) Description() string            { return "writes" }
func (writeTool) Permission() toolsys.Permission { return toolsys.PermWrite }
func (writeTool) SecretParams() []string         { return nil }
func (writeTool) Execute(context.Context, struct{}, *toolsys.Context) (toolsys.Result, error) {
	return toolsys.Result{Content: "written"}, nil
}
