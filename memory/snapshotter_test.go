package memory_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// snapshotGate holds the background snapshots of a journal: each waits
// until the test releases it, and reports when it has been taken.
type snapshotGate struct {
	started chan string
	release chan struct{}
	taken   chan error
}

func gateSnapshots(j *memory.BadgerJournal) *snapshotGate {
	g := &snapshotGate{started: make(chan string, 8), release: make(chan struct{}), taken: make(chan error, 8)}
	memory.WrapSnapshotTake(j, func(take func(context.Context, string) error) func(context.Context, string) error {
		return func(ctx context.Context, session string) error {
			g.started <- session
			select {
			case <-g.release:
			case <-ctx.Done():
				g.taken <- ctx.Err()
				return ctx.Err()
			}
			err := take(ctx, session)
			g.taken <- err
			return err
		}
	})
	return g
}

// appendTurns appends n user messages to session, one per append.
func appendTurns(t *testing.T, j memory.Journal, session string, n int) {
	t.Helper()
	act, tail, err := j.Activate(t.Context(), session, "node")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if tail, err = j.Append(t.Context(), session, act, tail, messages.UserMessage{TurnID: "t" + strconv.Itoa(i), Message: messages.UserText("hi")}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSnapshotInBackground_AppendDoesNotWait checks that, with
// SnapshotInBackground, the append that crosses a multiple of SnapshotEvery
// returns while its snapshot has not been taken, and that the snapshot is
// written afterwards and used by Load.
func TestSnapshotInBackground_AppendDoesNotWait(t *testing.T) {
	store := openStore(t, "")
	defer store.Close()
	j := newJournal(t, store, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: 4, SnapshotInBackground: true})
	g := gateSnapshots(j)

	appendTurns(t, j, "s", 4) // the activation and 4 messages: seq 5 crosses 4
	if got := <-g.started; got != "s" {
		t.Fatalf("snapshot started for %q, want s", got)
	}
	if memory.HasSnapshot(store, "s") {
		t.Fatal("a snapshot was stored before the background snapshot ran: the append took it itself")
	}
	close(g.release)
	if err := <-g.taken; err != nil {
		t.Fatalf("background snapshot: %v", err)
	}
	if !memory.HasSnapshot(store, "s") {
		t.Fatal("no snapshot stored after the background snapshot ran")
	}
	st, err := j.Load(t.Context(), "s")
	if err != nil || st.Seq != 5 || len(st.Messages(memory.ViewOptions{})) != 4 {
		t.Fatalf("Load = seq %v, err %v; want seq 5 and 4 messages", st, err)
	}
}

// TestSnapshotInBackground_NotAfterDelete checks that a background
// snapshot of a session deleted while it waited writes nothing, so that no
// snapshot outlives its session.
func TestSnapshotInBackground_NotAfterDelete(t *testing.T) {
	store := openStore(t, "")
	defer store.Close()
	j := newJournal(t, store, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: 4, SnapshotInBackground: true})
	g := gateSnapshots(j)

	appendTurns(t, j, "s", 4)
	<-g.started
	if err := j.Delete(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	<-g.taken
	if memory.HasSnapshot(store, "s") {
		t.Fatal("a snapshot of the deleted session was stored")
	}
	if _, err := j.Load(t.Context(), "s"); err == nil {
		t.Fatal("Load of the deleted session succeeded")
	}
}

// TestSnapshotInBackground_CloseCancels checks that Close cancels the
// snapshot being taken rather than waiting for it, and stores nothing.
func TestSnapshotInBackground_CloseCancels(t *testing.T) {
	store := openStore(t, "")
	defer store.Close()
	j := newJournal(t, store, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: 4, SnapshotInBackground: true})
	g := gateSnapshots(j)

	appendTurns(t, j, "s", 4)
	<-g.started
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-g.taken; err == nil {
		t.Fatal("the snapshot being taken was not cancelled by Close")
	}
	if memory.HasSnapshot(store, "s") {
		t.Fatal("a snapshot was stored after Close")
	}
}

// TestSnapshot_SynchronousByDefault checks that without
// SnapshotInBackground the snapshot is in place when the append returns.
func TestSnapshot_SynchronousByDefault(t *testing.T) {
	store := openStore(t, "")
	defer store.Close()
	j := newJournal(t, store, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: 4})
	appendTurns(t, j, "s", 4)
	if !memory.HasSnapshot(store, "s") {
		t.Fatal("no snapshot after the append that crossed SnapshotEvery")
	}
}
