package actors

import (
	"context"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// TestRetention_SubscriberReleased: once a turn's stream has ended, nothing
// the idle session keeps reaches the stream's subscriber and its event
// buffer (a handled submission used to stay in the backing array of the
// pending list).
func TestRetention_SubscriberReleased(t *testing.T) {
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
	sess, err := rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	var subs []weak.Pointer[subscriber]
	for range 2 {
		sub := newSubscriber(rt.ids.NewID(), rt.cfg.EventBuffer)
		subs = append(subs, weak.Make(sub))
		ref, err := sess.submit(sub, messages.UserText("hi"))
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range sub.events(t.Context(), ref) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := sess.Status(t.Context()); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	for i, w := range subs {
		if w.Value() != nil {
			t.Errorf("the subscriber of turn %d is still reachable after its turn ended", i)
		}
	}
}

// submit sends input to the session as Stream does, with sub as the
// stream's subscriber.
func (s *Session) submit(sub *subscriber, input messages.Message) (*sessionRef, error) {
	return s.rt.post(s.id, &submitCmd{turnID: sub.turnID, msg: input, sub: sub})
}
