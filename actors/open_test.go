package actors_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// gatedLoad is a journal whose first Load waits until release is closed,
// after closing entered.
type gatedLoad struct {
	*writeCounter
	once             sync.Once
	entered, release chan struct{}
}

func (j *gatedLoad) Load(ctx context.Context, session string) (*memory.State, error) {
	j.once.Do(func() {
		close(j.entered)
		<-j.release
	})
	return j.writeCounter.Load(ctx, session)
}

// TestOpen_DeleteWaitsForAnOpenLoading: Open loads and activates a session
// on its caller's goroutine; a Delete of the session meanwhile waits for
// it, and then deletes the session Open activated, instead of finding
// nothing to delete while Open writes the activation after it.
func TestOpen_DeleteWaitsForAnOpenLoading(t *testing.T) {
	j := &gatedLoad{writeCounter: newWriteCounter(t), entered: make(chan struct{}), release: make(chan struct{})}
	prov, err := scripted.New(textScript("done"), scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := actors.New(actors.Config{Journal: j, Provider: prov, Tools: runAllRegistry(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })

	opened := make(chan error, 1)
	go func() {
		_, err := rt.Open(t.Context(), "s")
		opened <- err
	}()
	<-j.entered
	deleted := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		deleted <- rt.Delete(t.Context(), "s")
	}()
	<-started
	close(j.release)
	if err := <-opened; err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := <-deleted; err != nil {
		t.Fatalf("Delete during Open: %v, want the session Open activated deleted", err)
	}
	if tail, err := j.Tail(t.Context(), "s"); err != nil || tail != 0 {
		t.Fatalf("journal tail after Delete = %d, %v; want 0", tail, err)
	}
	// The id starts an empty session afterwards.
	sess, err := rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.Submit(t.Context(), messages.UserText("hi"))
	if err != nil || res.Outcome != messages.OutcomeCompleted {
		t.Fatalf("Submit after Delete: %v, %v", res, err)
	}
	if h, err := sess.History(t.Context()); err != nil || len(h) != 2 {
		t.Fatalf("History after Delete and a turn = %d messages, %v; want 2", len(h), err)
	}
}
