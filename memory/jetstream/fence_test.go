package jetstream

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
)

func userText(text string) messages.UserMessage {
	return messages.UserMessage{Message: messages.UserText(text)}
}

// TestFencing runs two writers of one session on two connections, as two
// members would: once the second activates, the first one's append is
// refused with ErrFenced after a single attempt, and nothing it writes
// lands.
func TestFencing(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	a := newJournal(t, srv.URL(), Config{Options: memory.JournalOptions{Durability: memory.DurabilityBatch}})
	b := newJournal(t, srv.URL(), Config{Options: memory.JournalOptions{Durability: memory.DurabilityBatch}})
	ctx := t.Context()

	actA, tailA, err := a.Activate(ctx, "s", "member-a")
	if err != nil {
		t.Fatal(err)
	}
	if tailA, err = a.Append(ctx, "s", actA, tailA, userText("A-1")); err != nil {
		t.Fatal(err)
	}
	actB, tailB, err := b.Activate(ctx, "s", "member-b")
	if err != nil {
		t.Fatal(err)
	}
	if actB != actA+1 || tailB != tailA+1 {
		t.Fatalf("B's activation = %d at %d, want %d at %d", actB, tailB, actA+1, tailA+1)
	}

	// A still believes its tail is tailA: its cached head is stale, the
	// servers refuse the record, and A learns why from the head it reads.
	before := a.cfg.Conn.Stats().OutMsgs
	_, err = a.Append(ctx, "s", actA, tailA, userText("A-late"))
	if !errors.Is(err, memory.ErrFenced) {
		t.Fatalf("A's append after B activated: error = %v, want ErrFenced", err)
	}
	if errors.Is(err, memory.ErrConflict) {
		t.Errorf("fenced append also reports ErrConflict: %v", err)
	}
	// One refused publish and one read of the head: no retry.
	if sent := a.cfg.Conn.Stats().OutMsgs - before; sent != 2 {
		t.Errorf("A's fenced append sent %d messages, want 2 (one record, one head read)", sent)
	}
	// With B's tail, A is still fenced.
	if _, err := a.Append(ctx, "s", actA, tailB, userText("A-later")); !errors.Is(err, memory.ErrFenced) {
		t.Errorf("A's append on B's tail: error = %v, want ErrFenced", err)
	}
	if _, err := b.Append(ctx, "s", actB, tailB, userText("B-1")); err != nil {
		t.Fatalf("B's append: %v", err)
	}
	checkNothingAfterFence(t, a, "s", "member-b", "A-")
}

// TestFencingRace lets a writer append in a loop while another member
// activates the session: the first writer stops at its first ErrFenced,
// and none of its entries follows the new activation.
func TestFencingRace(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	a := newJournal(t, srv.URL(), Config{Options: memory.JournalOptions{Durability: memory.DurabilityBatch}})
	b := newJournal(t, srv.URL(), Config{Options: memory.JournalOptions{Durability: memory.DurabilityBatch}})
	ctx := t.Context()
	for round := range 5 {
		session := fmt.Sprintf("s%d", round)
		act, tail, err := a.Activate(ctx, session, "member-a")
		if err != nil {
			t.Fatal(err)
		}
		started := make(chan struct{})
		var wg sync.WaitGroup
		var fenced error
		wg.Go(func() {
			for i := 0; ; i++ {
				if i == 3 {
					close(started)
				}
				next, err := a.Append(ctx, session, act, tail, userText(fmt.Sprintf("A-%d", i)))
				if err != nil {
					fenced = err
					if i < 3 {
						close(started)
					}
					return
				}
				tail = next
			}
		})
		<-started
		if _, _, err := b.Activate(ctx, session, "member-b"); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if !errors.Is(fenced, memory.ErrFenced) {
			t.Fatalf("round %d: A stopped with %v, want ErrFenced", round, fenced)
		}
		checkNothingAfterFence(t, a, session, "member-b", "A-")
	}
}

// checkNothingAfterFence reads the session and fails if an entry whose text
// starts with zombie follows the activation by node.
func checkNothingAfterFence(t *testing.T, j memory.Journal, session, node, zombie string) {
	t.Helper()
	fenced := false
	var seq uint64
	for e, err := range j.Read(t.Context(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		seq++
		if e.Envelope.Seq != seq {
			t.Fatalf("entry %d has seq %d: the journal is not contiguous", seq, e.Envelope.Seq)
		}
		switch ev := e.Event.(type) {
		case messages.Activated:
			fenced = fenced || ev.Node == node
		case messages.UserMessage:
			if fenced && strings.HasPrefix(ev.Message.Text(), zombie) {
				t.Errorf("entry %d (%q) of the fenced writer landed after the activation by %s", seq, ev.Message.Text(), node)
			}
		}
	}
	if !fenced {
		t.Errorf("no activation by %s in %s", node, session)
	}
}
