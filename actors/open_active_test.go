package actors

import (
	"errors"
	"testing"

	"github.com/agcore/agcore/messages"
)

// TestOpen_ActiveSessionAsksNothing: Open of a session whose actor runs
// and has journaled its activation posts nothing to the actor; Open of a
// session that is not active activates it.
func TestOpen_ActiveSessionAsksNothing(t *testing.T) {
	rt := newIdleRuntime(t)
	sess, err := rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Submit(t.Context(), messages.UserText("hi")); err != nil {
		t.Fatal(err)
	}
	ref := rt.liveRef("s")
	if ref == nil || !ref.activated.Load() {
		t.Fatal("the session is not active and activated after a turn")
	}
	rt.mu.Lock()
	before := ref.posted
	rt.mu.Unlock()
	if _, err := rt.Open(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	rt.mu.Lock()
	after := ref.posted
	rt.mu.Unlock()
	if after != before {
		t.Errorf("Open of an active session posted %d commands to it, want none", after-before)
	}
}

// TestOpen_ActiveSessionAfterShutdownFails: once Shutdown has begun, Open
// fails with ErrClosed, even for a session whose actor still runs.
func TestOpen_ActiveSessionAfterShutdownFails(t *testing.T) {
	rt := newIdleRuntime(t)
	sess, err := rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Status(t.Context()); err != nil { // the actor has started
		t.Fatal(err)
	}
	if ref := rt.liveRef("s"); ref == nil || !ref.activated.Load() {
		t.Fatal("the session is not active and activated")
	}
	rt.mu.Lock()
	rt.closed = true // as Shutdown sets it first, before it stops the sessions
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		rt.closed = false
		rt.mu.Unlock()
	}()
	if _, err := rt.Open(t.Context(), "s"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Open during shutdown: %v, want ErrClosed", err)
	}
}
