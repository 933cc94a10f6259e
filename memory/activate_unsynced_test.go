package memory_test

import (
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// TestActivateAppend_AloneIsNotSynced checks that an activation appended
// alone (a session opened, with nothing to write yet) starts no fsync
// under sync and batch durability, that an activation with events still
// does, and that the next synced append makes the lone activation durable
// with it: after a reopen, the journal holds both.
func TestActivateAppend_AloneIsNotSynced(t *testing.T) {
	for _, d := range []memory.Durability{memory.DurabilitySync, memory.DurabilityBatch} {
		t.Run(d.String(), func(t *testing.T) {
			dir := t.TempDir()
			store := openStore(t, dir)
			j := newJournal(t, store, memory.JournalOptions{Durability: d})

			before := memory.SyncsStarted(store)
			act, tail, err := j.ActivateAppend(t.Context(), "opened", "node-a", 0)
			if err != nil || act != 1 || tail != 1 {
				t.Fatalf("ActivateAppend alone = %d, %d, %v; want 1, 1, nil", act, tail, err)
			}
			if got := memory.SyncsStarted(store) - before; got != 0 {
				t.Errorf("a lone activation started %d syncs, want 0", got)
			}

			msg := messages.UserMessage{TurnID: "t0", Message: messages.UserText("hi")}
			before = memory.SyncsStarted(store)
			if _, _, err := j.ActivateAppend(t.Context(), "submitted", "node-a", 0, msg); err != nil {
				t.Fatal(err)
			}
			if got := memory.SyncsStarted(store) - before; got == 0 {
				t.Error("an activation with a message started no sync, want one")
			}

			before = memory.SyncsStarted(store)
			if _, err := j.Append(t.Context(), "opened", act, tail, msg); err != nil {
				t.Fatal(err)
			}
			if got := memory.SyncsStarted(store) - before; got == 0 {
				t.Error("an append after a lone activation started no sync, want one")
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}

			store = openStore(t, dir)
			defer store.Close()
			j = newJournal(t, store, memory.JournalOptions{Durability: d})
			defer j.Close()
			st, err := j.Load(t.Context(), "opened")
			if err != nil {
				t.Fatal(err)
			}
			if st.Activation != 1 || st.Seq != 2 || len(st.Messages(memory.ViewOptions{})) != 1 {
				t.Errorf("reopened: activation %d, seq %d, %d messages; want 1, 2, 1", st.Activation, st.Seq, len(st.Messages(memory.ViewOptions{})))
			}
		})
	}
}
