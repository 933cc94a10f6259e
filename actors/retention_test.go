package actors

import (
	"runtime"
	"testing"
	"weak"

	"github.com/agcore/agcore/messages"
)

// TestRetention_SubscriberReleased: once a turn's stream has ended, nothing
// the idle session keeps reaches the stream's subscriber and its event
// buffer (a handled submission used to stay in the backing array of the
// pending list).
func TestRetention_SubscriberReleased(t *testing.T) {
	rt := newIdleRuntime(t)
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
