package actors_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// TestNewInMemory_JournalsInMemory runs a turn on an in-memory runtime:
// its journal is a memory.MemoryJournal holding the turn, it has no store
// (Backup says so rather than writing a backup without the journals), and
// Shutdown releases the journal.
func TestNewInMemory_JournalsInMemory(t *testing.T) {
	ctx := t.Context()
	rt, err := actors.NewInMemory(actors.Config{Provider: scripted.MustNew(textScript("done"), scripted.Options{}), IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	j, ok := rt.Journal().(*memory.MemoryJournal)
	if !ok {
		t.Fatalf("NewInMemory journals into %T, want *memory.MemoryJournal", rt.Journal())
	}
	if j.Durability() != memory.DurabilityNone {
		t.Errorf("journal durability = %v, want none", j.Durability())
	}
	sess, err := rt.Open(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := sess.Submit(ctx, messages.UserText("hello")); err != nil || res.Text != "done" {
		t.Fatalf("Submit = %+v, %v", res, err)
	}
	st, err := j.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.History) != 2 || st.History[0].Text() != "hello" || st.History[1].Text() != "done" || st.Turn != 1 {
		t.Errorf("journaled state = turn %d, history %+v; want the turn", st.Turn, st.History)
	}
	var backup bytes.Buffer
	if info, err := rt.Backup(ctx, &backup); !errors.Is(err, actors.ErrNoStore) || backup.Len() != 0 {
		t.Errorf("Backup = %+v, %v, %d bytes written; want ErrNoStore and nothing written", info, err, backup.Len())
	}
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Tail(ctx, "s1"); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("journal Tail after Shutdown: error = %v, want ErrClosed (released)", err)
	}
}
