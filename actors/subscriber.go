package actors

// This file holds the subscriber: one stream of a session's events, from
// the session actor to a caller of Session.Stream or Session.Watch.

import (
	"context"
	"iter"
	"sync"

	"github.com/agcore/agcore/messages"
)

// subscriber carries the events of one turn (or, for Watch, of the whole
// session) from the session actor to its consumer through a bounded
// buffer. The actor never blocks on it: when the buffer is full, a
// TextDelta is dropped (the final text is in TurnEnded), TurnEnded is kept
// aside and always delivered, and any other event disconnects the
// subscriber with ErrSlowSubscriber.
type subscriber struct {
	turnID string
	all    bool // every event of the session (Watch), not one turn's
	ch     chan messages.Event

	// turn and attached are the session actor's: which turn the
	// subscriber follows, once it follows one.
	turn     int
	attached bool

	mu      sync.Mutex
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

// open reports whether the subscription still takes events.
func (s *subscriber) open() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed
}

func (s *subscriber) closeLocked(err error) {
	if s.closed {
		return
	}
	s.closed, s.err = true, err
	close(s.done)
}

// result returns the final event or the error that ended the subscription.
func (s *subscriber) result() (messages.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.final, s.err
}

// events yields the buffered events, then TurnEnded or the error that ended
// the subscription. Cancelling ctx ends it with ctx's error, and a session
// actor that stops without ending it (ref) with the reason it stopped;
// either, or breaking out of the loop, closes the subscription, which the
// session then drops.
func (s *subscriber) events(ctx context.Context, ref *sessionRef) iter.Seq2[messages.Event, error] {
	return func(yield func(messages.Event, error) bool) {
		defer s.fail(context.Canceled)
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
				s.drain(yield)
				return
			case <-ref.done:
				// The actor ends its subscriptions as it stops; one it
				// never saw (its command was still queued) ends here.
				s.fail(ref.stopped())
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
		}
	}
}

// drain yields what is left in the buffer, then the end of the
// subscription.
func (s *subscriber) drain(yield func(messages.Event, error) bool) {
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
	final, err := s.result()
	if final != nil {
		yield(final, nil)
		return
	}
	yield(nil, err)
}
