package actors

import (
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// newIdleRuntime returns an in-memory runtime for tests that build a
// session's actor by hand.
func newIdleRuntime(t *testing.T) *Runtime {
	t.Helper()
	model := scripted.MustNew(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}},
	}}, scripted.Options{})
	rt, err := NewInMemory(Config{Provider: model, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	return rt
}

// TestSessionActor_Footprint pins what a new session's actor and carry
// allocate before they are used: no map of sub-agents, no set of
// subscribers, and an actor that fits the allocator's 512-byte size class
// (it took the 576-byte one).
func TestSessionActor_Footprint(t *testing.T) {
	rt := newIdleRuntime(t)
	c := newCarry(rt, newSessionRef("s", false), nil)
	a := newSessionActor(rt, c)
	if a.live != nil {
		t.Error("a new session actor made its map of sub-agents")
	}
	if c.subs != nil {
		t.Error("a new carry made its set of subscribers")
	}
	if size := unsafe.Sizeof(*a); size > 512 {
		t.Errorf("sessionActor is %d bytes, want at most 512 (one size class)", size)
	}
}

// TestCarry_Subscribers checks the carry's subscriber set: a subscriber
// is held once however often it attaches, a dropped one leaves no
// reference in the backing array, and an emptied large array is released
// while a small one is kept for the next turn.
func TestCarry_Subscribers(t *testing.T) {
	c := &sessionCarry{}
	a, b := newSubscriber("a", 0), newSubscriber("b", 0)
	c.follow(a)
	c.follow(a)
	c.follow(b)
	if len(c.subs) != 2 {
		t.Fatalf("%d subscribers after following a twice and b once, want 2", len(c.subs))
	}
	var seen []*subscriber
	c.unfollow(func(s *subscriber) bool { seen = append(seen, s); return s == a })
	if len(seen) != 2 || seen[0] != a || seen[1] != b {
		t.Errorf("unfollow asked about %v, want a then b, once each", seen)
	}
	if len(c.subs) != 1 || c.subs[0] != b {
		t.Fatalf("after dropping a: %v, want [b]", c.subs)
	}
	if rest := c.subs[1:cap(c.subs)]; len(rest) > 0 && rest[0] != nil {
		t.Error("the backing array still holds the dropped subscriber")
	}
	c.unfollow(func(*subscriber) bool { return true })
	if len(c.subs) != 0 || c.subs == nil {
		t.Errorf("emptied small set: len %d, nil %v; want the array kept", len(c.subs), c.subs == nil)
	}
	for range maxKeptSubs + 1 {
		c.follow(newSubscriber("w", 0))
	}
	c.unfollow(func(*subscriber) bool { return true })
	if c.subs != nil {
		t.Errorf("emptied set of %d slots kept, want it released", cap(c.subs))
	}
}

// TestSessionActor_RestartKeepsCarry restarts a session's actor twice
// (each new instance is made by the producer of the session's Props, which
// holds the carry): the restart count, kept in the carry, reaches two, and
// a Watch that began before the restarts, a subscriber in the carry, still
// sees the next turn.
func TestSessionActor_RestartKeepsCarry(t *testing.T) {
	rt := newIdleRuntime(t)
	ctx := t.Context()
	sess, err := rt.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	seen := make(chan messages.Event, 4096)
	go func() {
		for ev, err := range sess.Watch(watchCtx) {
			if err != nil {
				return
			}
			seen <- ev
		}
	}()
	// The watch follows the session once the actor has taken up its
	// command: turns run until it has seen an event.
	for watching := false; !watching; {
		if _, err := sess.Submit(ctx, messages.UserText("warm up")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-seen:
			watching = true
		default:
		}
	}
	for range 2 {
		if err := sess.Fault(errors.New("injected")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sess.Status(ctx); err != nil {
		t.Fatal(err)
	}
	tree, err := rt.Tree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Sessions) != 1 || tree.Sessions[0].Restarts != 2 {
		t.Fatalf("tree sessions = %+v, want s with two restarts", tree.Sessions)
	}
	res, err := sess.Submit(ctx, messages.UserText("second"))
	if err != nil {
		t.Fatal(err)
	}
	for ev := range seen {
		if end, ok := ev.(messages.TurnEnded); ok && end.Turn == res.Turn {
			return
		}
	}
}
