package actors_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// writeCounter counts the writes made to a Badger journal.
type writeCounter struct {
	*memory.BadgerJournal
	mu                         sync.Mutex
	activates, appends, merged int
	mergedEvents               []int // events appended with each ActivateAppend
}

func (j *writeCounter) Activate(ctx context.Context, session, node string) (uint64, uint64, error) {
	j.mu.Lock()
	j.activates++
	j.mu.Unlock()
	return j.BadgerJournal.Activate(ctx, session, node)
}

func (j *writeCounter) Append(ctx context.Context, session string, activation, expectTail uint64, events ...messages.JournalEvent) (uint64, error) {
	j.mu.Lock()
	j.appends++
	j.mu.Unlock()
	return j.BadgerJournal.Append(ctx, session, activation, expectTail, events...)
}

func (j *writeCounter) ActivateAppend(ctx context.Context, session, node string, expectTail uint64, events ...messages.JournalEvent) (uint64, uint64, error) {
	j.mu.Lock()
	j.merged++
	j.mergedEvents = append(j.mergedEvents, len(events))
	j.mu.Unlock()
	return j.BadgerJournal.ActivateAppend(ctx, session, node, expectTail, events...)
}

func newWriteCounter(t *testing.T) *writeCounter {
	t.Helper()
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	bj, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		t.Fatal(err)
	}
	return &writeCounter{BadgerJournal: bj}
}

// newCounterRuntime starts a runtime over j (mod adjusts its config), shut down when the test ends
// or when the returned function is called.
func newCounterRuntime(t *testing.T, j *writeCounter, mod func(*actors.Config)) (*actors.Runtime, func()) {
	t.Helper()
	prov, err := scripted.New(textScript("done"), scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := actors.Config{Journal: j, Provider: prov, Tools: runAllRegistry(t)}
	if mod != nil {
		mod(&cfg)
	}
	rt, err := actors.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	shutdown := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := rt.Shutdown(ctx); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		})
	}
	t.Cleanup(shutdown)
	return rt, shutdown
}

// types returns the types of session's journal entries from seq from.
func types(t *testing.T, j memory.Journal, session string, from uint64) []string {
	t.Helper()
	var out []string
	for e, err := range j.Read(t.Context(), session, from) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Envelope.Type)
	}
	return out
}

// TestReactivation_ActivationJournaledWithMessage passivates an idle
// session and submits to it again: the submission that reactivates it is
// journaled with the activation in one append, where it took two (an
// activation, then the message); the journal reads as it did.
func TestReactivation_ActivationJournaledWithMessage(t *testing.T) {
	const idle = time.Hour
	clock := newManualClock()
	j := newWriteCounter(t)
	rt, _ := newCounterRuntime(t, j, func(c *actors.Config) { c.IdleTimeout, c.Clock = idle, clock })
	sess, err := rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Submit(t.Context(), messages.UserText("one")); err != nil {
		t.Fatal(err)
	}
	// The timer armed at the start finds the turn's activity and is armed
	// again; the next one finds the session idle.
	armedFor(t, clock, idle)
	clock.fire(idle)
	armedFor(t, clock, idle)
	clock.fire(idle)
	waitFor(t, func() bool { return !slices.Contains(rt.Sessions(), "s") })
	tail, err := j.Tail(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	j.mu.Lock()
	before := j.merged + j.activates + j.appends
	j.mu.Unlock()

	res, err := sess.Submit(t.Context(), messages.UserText("two"))
	if err != nil || res.Outcome != messages.OutcomeCompleted {
		t.Fatalf("Submit after passivation = %+v, %v", res, err)
	}
	j.mu.Lock()
	activates, merged, events := j.activates, j.merged, j.mergedEvents
	writes := j.merged + j.activates + j.appends - before
	j.mu.Unlock()
	if activates != 0 || merged != 2 || events[1] != 1 {
		t.Fatalf("Activate %d times, ActivateAppend %d times with %v events; want the reactivation written with the message", activates, merged, events)
	}
	// The turn: the activation with the message, the reply, the end.
	if writes != 2 {
		t.Errorf("the reactivating turn made %d journal writes, want 2", writes)
	}
	if got := types(t, j, "s", tail+1); len(got) < 2 || got[0] != "activated" || got[1] != "user_message" {
		t.Fatalf("journal after the passivation = %v, want activated then user_message first", got)
	}
}

// TestOpen_ActivationJournaledAtOnce checks that Open still journals the
// activation of a session, new or not, before it returns, so that an
// older writer is fenced off at once.
func TestOpen_ActivationJournaledAtOnce(t *testing.T) {
	j := newWriteCounter(t)
	rt, shutdown := newCounterRuntime(t, j, nil)
	sess, err := rt.Open(t.Context(), "old")
	if err != nil {
		t.Fatal(err)
	}
	if got := types(t, j, "old", 1); !slices.Equal(got, []string{"activated"}) {
		t.Fatalf("journal after Open of a new session = %v, want [activated]", got)
	}
	if _, err := sess.Submit(t.Context(), messages.UserText("hi")); err != nil {
		t.Fatal(err)
	}
	shutdown()
	tail, err := j.Tail(t.Context(), "old")
	if err != nil {
		t.Fatal(err)
	}
	rt2, _ := newCounterRuntime(t, j, nil)
	if _, err := rt2.Open(t.Context(), "old"); err != nil {
		t.Fatal(err)
	}
	if got := types(t, j, "old", tail+1); !slices.Equal(got, []string{"activated"}) {
		t.Fatalf("journal after reopening = %v, want one more activated entry", got)
	}
}
