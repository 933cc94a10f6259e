package memory_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// TestJournal_AppendReadsNoHead checks that appends take the session's head
// from memory: after the activation has read it once, no append of the
// session reads it from the store again, whichever journal of the store
// makes it.
func TestJournal_AppendReadsNoHead(t *testing.T) {
	for _, d := range durabilities {
		t.Run(d.String(), func(t *testing.T) {
			s := openStore(t, "")
			defer s.Close()
			j1 := newJournal(t, s, memory.JournalOptions{Durability: d, SnapshotEvery: -1})
			j2 := newJournal(t, s, memory.JournalOptions{Durability: d, SnapshotEvery: -1})
			ctx := t.Context()
			act, tail, err := j1.Activate(ctx, "s", "n")
			if err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				j := j1
				if i%2 == 1 {
					j = j2
				}
				if tail, err = j.Append(ctx, "s", act, tail, messages.ToolResult{CallID: "c", Content: fmt.Sprint(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if got := memory.HeadReads(s); got != 1 {
				t.Errorf("the store read the head %d times for an activation and 50 appends, want once", got)
			}
			if stored, err := j2.Tail(ctx, "s"); err != nil || stored != tail || tail != 51 {
				t.Errorf("Tail = %d, %v; the appends returned %d, want 51", stored, err, tail)
			}
		})
	}
}

// TestJournal_KeptHeadsCompareAndFence checks that a head kept in memory
// still refuses what the stored head refused: an append after a stale tail
// (ErrConflict) and an append of a superseded activation (ErrFenced), from
// another journal of the store as well; and that a refused append changes
// nothing.
func TestJournal_KeptHeadsCompareAndFence(t *testing.T) {
	for _, d := range durabilities {
		t.Run(d.String(), func(t *testing.T) {
			s := openStore(t, "")
			defer s.Close()
			j1 := newJournal(t, s, memory.JournalOptions{Durability: d, SnapshotEvery: -1})
			j2 := newJournal(t, s, memory.JournalOptions{Durability: d, SnapshotEvery: -1})
			ctx := t.Context()
			act1, tail, err := j1.Activate(ctx, "s", "a")
			if err != nil {
				t.Fatal(err)
			}
			if tail, err = j1.Append(ctx, "s", act1, tail, user(0, "one")); err != nil {
				t.Fatal(err)
			}
			if _, err := j2.Append(ctx, "s", act1, tail-1, user(1, "stale")); !errors.Is(err, memory.ErrConflict) {
				t.Errorf("append after a stale tail = %v, want ErrConflict", err)
			}
			act2, tail2, err := j2.Activate(ctx, "s", "b")
			if err != nil || act2 != act1+1 || tail2 != tail+1 {
				t.Fatalf("second Activate = %d, %d, %v; want %d, %d", act2, tail2, err, act1+1, tail+1)
			}
			if _, err := j1.Append(ctx, "s", act1, tail2, user(1, "fenced")); !errors.Is(err, memory.ErrFenced) {
				t.Errorf("append of the superseded activation = %v, want ErrFenced", err)
			}
			if _, err := j1.Append(ctx, "s", act2, tail, user(1, "stale")); !errors.Is(err, memory.ErrConflict) {
				t.Errorf("append after a stale tail = %v, want ErrConflict", err)
			}
			if got, err := j1.Append(ctx, "s", act2, tail2, user(1, "two")); err != nil || got != tail2+1 {
				t.Errorf("append after the refusals = %d, %v; want %d", got, err, tail2+1)
			}
			texts := []string{}
			for e, err := range j1.Read(ctx, "s", 1) {
				if err != nil {
					t.Fatal(err)
				}
				if u, ok := e.Event.(messages.UserMessage); ok {
					texts = append(texts, u.Message.Text())
				}
			}
			if fmt.Sprint(texts) != "[one two]" {
				t.Errorf("journal holds %q, want [one two]", texts)
			}
		})
	}
}

// TestJournal_OutcomeUnknownHoldsTheSession gives up on a batch append
// while the committer holds it, then appends after the tail it knew: the
// second append waits for the first to be committed and sees the head it
// left (ErrConflict), instead of writing over its entry.
func TestJournal_OutcomeUnknownHoldsTheSession(t *testing.T) {
	s := openStore(t, "")
	defer s.Close()
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilityBatch, SnapshotEvery: -1})
	ctx := t.Context()
	act, tail, err := j.Activate(ctx, "s", "n")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	memory.HoldCommits(j, entered, release)

	ctxA, cancelA := context.WithCancel(ctx)
	errA := make(chan error, 1)
	go func() {
		_, err := j.Append(ctxA, "s", act, tail, user(0, "first"))
		errA <- err
	}()
	<-entered // the committer holds the first append
	errB := make(chan error, 1)
	go func() {
		_, err := j.Append(ctx, "s", act, tail, user(0, "second"))
		errB <- err
	}()
	for memory.HeadWaiters(s, "s") < 2 {
		runtime.Gosched() // until the second append waits for the session
	}
	cancelA()
	if err := <-errA; !errors.Is(err, memory.ErrOutcomeUnknown) {
		t.Fatalf("the abandoned append returned %v, want ErrOutcomeUnknown", err)
	}
	close(release)
	if err := <-errB; !errors.Is(err, memory.ErrConflict) {
		t.Errorf("the append after the abandoned one = %v, want ErrConflict", err)
	}
	var texts []string
	for e, err := range j.Read(ctx, "s", 1) {
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := e.Event.(messages.UserMessage); ok {
			texts = append(texts, u.Message.Text())
		}
	}
	if fmt.Sprint(texts) != "[first]" {
		t.Errorf("journal holds %q, want [first]", texts)
	}
	if got, err := j.Append(ctx, "s", act, tail+1, user(1, "third")); err != nil || got != tail+2 {
		t.Errorf("append after the committed one = %d, %v; want %d", got, err, tail+2)
	}
}

// TestJournal_KeptHeadsBounded checks that the store keeps at most its
// maximum of heads, and that the sessions whose heads it dropped still
// compare their appends against their stored heads.
func TestJournal_KeptHeadsBounded(t *testing.T) {
	s := openStore(t, "")
	defer s.Close()
	memory.SetMaxHeads(s, 8)
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: -1})
	ctx := t.Context()
	const sessions = 100
	tails := make([]uint64, sessions)
	for round := range 3 {
		for i := range sessions {
			id := fmt.Sprintf("s-%03d", i)
			if _, err := j.Append(ctx, id, 0, tails[i]+1, user(round, "stale")); !errors.Is(err, memory.ErrConflict) {
				t.Fatalf("round %d, %s: append after a wrong tail = %v, want ErrConflict", round, id, err)
			}
			var err error
			if tails[i], err = j.Append(ctx, id, 0, tails[i], user(round, "hi")); err != nil {
				t.Fatalf("round %d, %s: %v", round, id, err)
			}
			if n := memory.KeptHeads(s); n > 8 {
				t.Fatalf("the store keeps %d heads, want at most 8", n)
			}
		}
	}
	for i, tail := range tails {
		if tail != 3 {
			t.Errorf("session %d has tail %d after three appends", i, tail)
		}
	}
}

// user is a user message of turn with text.
func user(turn int, text string) messages.UserMessage {
	return messages.UserMessage{Turn: turn, Message: messages.UserText(text)}
}
