package actors

import (
	"context"
	"iter"
	"sync"

	"github.com/agcore/agcore/messages"
)

// subscriber receives the events of one turn through a bounded buffer. The
// session never blocks on it: when the buffer is full, a TextDelta is
// dropped (the final text is in TurnEnded), TurnEnded is kept aside and
// always delivered, and any other event disconnects the subscriber with
// ErrSlowSubscriber.
type subscriber struct {
	turnID string
	all    bool // every event of the session (Watch), not one turn's
	ch     chan messages.Event

	mu      sync.Mutex
	turn    int  // the turn followed, once attached
	live    bool // attached to a turn
	final   messages.Event
	err     error
	done    chan struct{}
	closed  bool
	dropped int
}

func newSubscriber(turnID string, buffer int) *subscriber {
	return &subscriber{turnID: turnID, ch: make(chan messages.Event, buffer), done: make(chan struct{})}
}

// deliver offers ev without blocking and reports whether the subscriber is
// still open.
func (s *subscriber) deliver(ev messages.Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if end, ok := ev.(messages.TurnEnded); ok && !s.all {
		s.final = end
		s.closeLocked(nil)
		return false
	}
	select {
	case s.ch <- ev:
		return true
	default:
	}
	if _, ok := ev.(messages.TextDelta); ok {
		s.dropped++
		return true
	}
	s.closeLocked(ErrSlowSubscriber)
	return false
}

// fail ends the subscription with err.
func (s *subscriber) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked(err)
}

func (s *subscriber) closeLocked(err error) {
	if s.closed {
		return
	}
	s.closed, s.err = true, err
	close(s.done)
}

// events yields the buffered events, then TurnEnded or the error that ended
// the subscription. Cancelling ctx ends it with ctx's error; so does
// breaking out of the loop, after which onStop runs.
func (s *subscriber) events(ctx context.Context, onStop func()) iter.Seq2[messages.Event, error] {
	return func(yield func(messages.Event, error) bool) {
		defer onStop()
		for {
			select {
			case ev := <-s.ch:
				if !yield(ev, nil) {
					return
				}
				continue
			default:
			}
			select {
			case ev := <-s.ch:
				if !yield(ev, nil) {
					return
				}
			case <-s.done:
				for {
					select {
					case ev := <-s.ch:
						if !yield(ev, nil) {
							return
						}
						continue
					default:
					}
					break
				}
				s.mu.Lock()
				final, err := s.final, s.err
				s.mu.Unlock()
				if final != nil {
					yield(final, nil)
					return
				}
				yield(nil, err)
				return
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
		}
	}
}

// hub fans a session's events out to the subscribers of its turns. It
// outlives the session's actor (restarts, passivation), so a turn resumed
// after a crash reaches the callers that were waiting for it.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
}

func newHub() *hub { return &hub{subs: make(map[*subscriber]struct{})} }

// watch starts delivering every event to s.
func (h *hub) watch(s *subscriber) {
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
}

// attach starts delivering the events of turn to s.
func (h *hub) attach(s *subscriber, turn int) {
	s.mu.Lock()
	s.turn, s.live = turn, true
	s.mu.Unlock()
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
}

// remove stops delivering to s.
func (h *hub) remove(s *subscriber) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// publish delivers ev to the subscribers of its turn, in the order publish
// is called; it never blocks.
func (h *hub) publish(ev messages.Event) {
	turn := ev.Meta().Turn
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if !s.all && s.turn != turn {
			continue
		}
		if !s.deliver(ev) {
			delete(h.subs, s)
		}
	}
}

// failAll ends every subscription with err.
func (h *hub) failAll(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.fail(err)
		delete(h.subs, s)
	}
}
