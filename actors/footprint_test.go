package actors

import (
	"context"
	"testing"
	"time"
	"unsafe"

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
