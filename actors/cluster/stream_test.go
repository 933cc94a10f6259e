package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
)

// TestStream drives stream with a submission that appends a turn's
// entries to a real journal, as members would, and checks what the
// stream yields: the turn's entries in order up to its end, whatever
// entries others append before its user message; nothing for a turn
// journaled before the call; the submission's error when the turn could
// not run, or after the end of a turn that failed.
func TestStream(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	journal := func() *jetstream.Journal {
		j, err := jetstream.New(ctx, jetstream.Config{Conn: natstest.Connect(t, srv.URL()), Options: memory.JournalOptions{Durability: memory.DurabilityNone}})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	w, r := journal(), journal()
	act, tail, err := w.Activate(ctx, "s", "m1")
	if err != nil {
		t.Fatal(err)
	}
	// appendEv appends as the current writer; it runs on the stream's
	// goroutine too, so it reports failures with Errorf.
	appendEv := func(evs ...messages.JournalEvent) {
		if tail, err = w.Append(ctx, "s", act, tail, evs...); err != nil {
			t.Errorf("append: %v", err)
		}
	}
	// moveTo makes another journal's writer activate the session, as the
	// member a session moves to does.
	moveTo := func(node string) {
		w = journal()
		if act, tail, err = w.Activate(ctx, "s", node); err != nil {
			t.Errorf("activate on %s: %v", node, err)
		}
	}
	user := func(turn int, id string) messages.UserMessage {
		return messages.UserMessage{Turn: turn, TurnID: id, Message: messages.UserText("hi")}
	}
	// A turn journaled before any stream.
	appendEv(user(0, "t0"), messages.TurnCompleted{Turn: 0, TurnID: "t0", Outcome: messages.OutcomeCompleted})

	collect := func(turnID string, submit func(context.Context) (*TurnReply, error)) (kinds []string, last error) {
		for e, err := range stream(ctx, r, "s", turnID, submit) {
			if err != nil {
				return kinds, err
			}
			kinds = append(kinds, e.Envelope.Type)
		}
		return kinds, nil
	}
	ok := &TurnReply{Result: &actors.TurnResult{Outcome: messages.OutcomeCompleted}}

	t.Run("a turn", func(t *testing.T) {
		kinds, err := collect("t1", func(context.Context) (*TurnReply, error) {
			moveTo("m2") // an activation before the turn's user message: yielded too
			appendEv(user(1, "t1"), messages.AssistantMessage{Turn: 1, Message: messages.AssistantText("hello")})
			moveTo("m3") // and one during the turn
			appendEv(messages.AssistantMessage{Turn: 1, Message: messages.AssistantText("again")})
			appendEv(messages.TurnCompleted{Turn: 1, TurnID: "t1", Outcome: messages.OutcomeCompleted})
			appendEv(user(2, "t2")) // after the end: not yielded
			return ok, nil
		})
		want := []string{"activated", "user_message", "assistant_message", "activated", "assistant_message", "turn_completed"}
		if err != nil || !equal(kinds, want) {
			t.Errorf("stream = %v, %v; want %v", kinds, err, want)
		}
		appendEv(messages.TurnCompleted{Turn: 2, TurnID: "t2", Outcome: messages.OutcomeCompleted})
	})
	t.Run("a journaled turn", func(t *testing.T) {
		kinds, err := collect("t0", func(context.Context) (*TurnReply, error) { return ok, nil })
		if err != nil || len(kinds) != 0 {
			t.Errorf("stream of a journaled turn = %v, %v; want nothing", kinds, err)
		}
	})
	t.Run("a turn that could not run", func(t *testing.T) {
		boom := errors.New("no member answered")
		kinds, err := collect("t3", func(context.Context) (*TurnReply, error) { return nil, boom })
		if !errors.Is(err, boom) || len(kinds) != 0 {
			t.Errorf("stream = %v, %v; want the submission's error", kinds, err)
		}
	})
	t.Run("a failed turn", func(t *testing.T) {
		failed := &TurnFailedError{Session: "s", TurnID: "t3", Reason: "model failed"}
		kinds, err := collect("t3", func(context.Context) (*TurnReply, error) {
			appendEv(user(3, "t3"), messages.TurnCompleted{Turn: 3, TurnID: "t3", Outcome: messages.OutcomeFailed})
			return &TurnReply{Result: &actors.TurnResult{Outcome: messages.OutcomeFailed}, Error: "model failed"}, failed
		})
		want := []string{"user_message", "turn_completed"}
		if !errors.Is(err, failed) || !equal(kinds, want) {
			t.Errorf("stream = %v, %v; want %v then the turn's error", kinds, err, want)
		}
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
