package jetstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
)

// TestFollow follows a session from its second entry while another
// connection's journal (another member) appends to it: the stored entries
// come first, then each appended one, in order, with nothing skipped, until
// the context ends.
func TestFollow(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	w := newJournal(t, srv.URL(), Config{Options: memory.JournalOptions{Durability: memory.DurabilityBatch}})
	r := newJournal(t, srv.URL(), Config{Options: memory.JournalOptions{Durability: memory.DurabilityBatch}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	act, tail, err := w.Activate(ctx, "s", "member-a") // seq 1
	if err != nil {
		t.Fatal(err)
	}
	if tail, err = w.Append(ctx, "s", act, tail, userText("u-2"), userText("u-3")); err != nil {
		t.Fatal(err)
	}

	fctx, fcancel := context.WithCancel(ctx)
	type got struct {
		seq  uint64
		text string
		err  error
	}
	out := make(chan got, 64)
	go func() {
		defer close(out)
		for e, err := range r.Follow(fctx, "s", 2) {
			if err != nil {
				out <- got{err: err}
				return
			}
			text := ""
			if u, ok := e.Event.(messages.UserMessage); ok {
				text = u.Message.Text()
			}
			out <- got{seq: e.Envelope.Seq, text: text}
		}
	}()
	next := func() got {
		t.Helper()
		select {
		case g := <-out:
			return g
		case <-ctx.Done():
			t.Fatalf("Follow yielded nothing: %v", ctx.Err())
			return got{}
		}
	}
	for _, want := range []got{{seq: 2, text: "u-2"}, {seq: 3, text: "u-3"}} {
		if g := next(); g != want {
			t.Fatalf("Follow yielded %+v, want %+v", g, want)
		}
	}
	// Appended after Follow began, in two records.
	if tail, err = w.Append(ctx, "s", act, tail, userText("u-4")); err != nil {
		t.Fatal(err)
	}
	if _, err = w.Append(ctx, "s", act, tail, userText("u-5"), userText("u-6")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []got{{seq: 4, text: "u-4"}, {seq: 5, text: "u-5"}, {seq: 6, text: "u-6"}} {
		if g := next(); g != want {
			t.Fatalf("Follow yielded %+v, want %+v", g, want)
		}
	}
	fcancel()
	if g := next(); !errors.Is(g.err, context.Canceled) {
		t.Fatalf("after the context ended, Follow yielded %+v, want context.Canceled", g)
	}
	if _, open := <-out; open {
		t.Fatal("Follow went on after its context's error")
	}
}
