package memory_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// journalOf reads a session's journal back as its envelopes' types, seqs
// and times, and its events.
func journalOf(t *testing.T, j memory.Journal, session string) []memory.Entry {
	t.Helper()
	var out []memory.Entry
	for e, err := range j.Read(t.Context(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// TestActivateAppend_SameAsActivateThenAppend writes a new session's
// activation and first events with ActivateAppend in one journal, and with
// Activate then Append in another, under the same clock: the journals are
// entry for entry the same, and so are the states loaded from them.
func TestActivateAppend_SameAsActivateThenAppend(t *testing.T) {
	for _, dir := range []string{"", "disk"} {
		for _, d := range []memory.Durability{memory.DurabilitySync, memory.DurabilityBatch, memory.DurabilityNone} {
			if dir != "" {
				dir = t.TempDir()
			}
			store := openStore(t, dir)
			tick := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			clock := func() time.Time { tick = tick.Add(time.Second); return tick }
			j := newJournal(t, store, memory.JournalOptions{Durability: d, Clock: clock})
			events := []messages.JournalEvent{
				messages.UserMessage{TurnID: "t0", Message: messages.UserText("hi")},
				messages.AssistantMessage{Message: messages.Message{Role: messages.RoleAssistant, Content: messages.Text("hello")}},
			}
			act, tail, err := j.ActivateAppend(t.Context(), "merged", "node-a", 0, events...)
			if err != nil || act != 1 || tail != 3 {
				t.Fatalf("ActivateAppend = %d, %d, %v; want activation 1, tail 3", act, tail, err)
			}
			tick = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			act2, tail2, err := j.Activate(t.Context(), "apart", "node-a")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := j.Append(t.Context(), "apart", act2, tail2, events...); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(journalOf(t, j, "apart"), journalOf(t, j, "merged")); diff != "" {
				t.Errorf("durability %v, dir %q: journals differ (-apart +merged):\n%s", d, dir, diff)
			}
			a, err := j.Load(t.Context(), "apart")
			if err != nil {
				t.Fatal(err)
			}
			m, err := j.Load(t.Context(), "merged")
			if err != nil {
				t.Fatal(err)
			}
			if m.Activation != 1 || m.Activation != a.Activation || len(m.Messages(memory.ViewOptions{})) != len(a.Messages(memory.ViewOptions{})) {
				t.Errorf("loaded state: activation %d, %d messages; want %d, %d", m.Activation, len(m.Messages(memory.ViewOptions{})), a.Activation, len(a.Messages(memory.ViewOptions{})))
			}
			store.Close()
		}
	}
}

// TestActivateAppend_ConflictAndFencing checks that ActivateAppend fails
// with ErrConflict, writing nothing, when the tail is not the one expected,
// and that a writer of the activation it supersedes is fenced off.
func TestActivateAppend_ConflictAndFencing(t *testing.T) {
	store := openStore(t, "")
	defer store.Close()
	j := newJournal(t, store, memory.JournalOptions{})
	old, tail, err := j.Activate(t.Context(), "s", "a")
	if err != nil {
		t.Fatal(err)
	}
	msg := messages.UserMessage{TurnID: "t0", Message: messages.UserText("hi")}
	if _, _, err := j.ActivateAppend(t.Context(), "s", "b", 0, msg); !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("ActivateAppend after a stale tail: err = %v, want ErrConflict", err)
	}
	if got, _ := j.Tail(t.Context(), "s"); got != tail {
		t.Fatalf("tail after a refused ActivateAppend = %d, want %d", got, tail)
	}
	act, _, err := j.ActivateAppend(t.Context(), "s", "b", tail)
	if err != nil || act != old+1 {
		t.Fatalf("ActivateAppend without events = %d, %v; want activation %d", act, err, old+1)
	}
	if _, err := j.Append(t.Context(), "s", old, tail+1, msg); !errors.Is(err, memory.ErrFenced) {
		t.Fatalf("append with the superseded activation: err = %v, want ErrFenced", err)
	}
}
