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
// queue. The actor never blocks on it: when the queue holds limit events,
// a TextDelta is dropped (the final text is in TurnEnded) and so is a
// ToolProgress (the next one, or ToolFinished, says more); TurnEnded is
// kept aside and always delivered, and any other event disconnects the
// subscriber with ErrSlowSubscriber. The queue grows with the events it
// holds, so a turn of ten events costs ten slots, not limit.
//
// A subscriber for Submit (outcome) keeps only what Submit reads: the
// ToolFinished and SubAgentEnded events and the end. It wakes its consumer once its queue is
// half full or the turn has ended, not for every event.
type subscriber struct {
	turnID  string
	all     bool // every event of the session (Watch), not one turn's
	outcome bool // only ToolFinished, SubAgentEnded and the end (Submit)
	limit   int

	// turn and attached are the session actor's: which turn the
	// subscriber follows, once it follows one.
	turn     int
	attached bool

	mu      sync.Mutex
	queue   []messages.Event
	head    int           // the next event of queue to yield
	wake    chan struct{} // (1) signalled when an event is queued
	final   messages.Event
	err     error
	done    chan struct{}
	closed  bool
	dropped int
}

func newSubscriber(turnID string, limit int) *subscriber {
	return &subscriber{turnID: turnID, limit: limit, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// wants reports whether the subscriber takes events like ev: the session
// neither masks nor offers it an event it does not want.
func (s *subscriber) wants(ev messages.Event) bool {
	if !s.outcome {
		return true
	}
	switch ev.(type) {
	case messages.ToolFinished, messages.SubAgentEnded, messages.TurnEnded:
		return true
	}
	return false
}

// wantsDeltas reports whether the subscriber takes TextDelta events.
func (s *subscriber) wantsDeltas() bool { return !s.outcome }

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
	if len(s.queue)-s.head < s.limit {
		if s.queue == nil {
			s.queue = make([]messages.Event, 0, min(s.limit, 16))
		}
		s.queue = append(s.queue, ev)
		if !s.outcome || 2*(len(s.queue)-s.head) >= s.limit {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
		return true
	}
	switch ev.(type) {
	case messages.TextDelta, messages.ToolProgress:
		s.dropped++
		return true
	}
	s.closeLocked(ErrSlowSubscriber)
	return false
}

// next takes the next queued event, if any.
func (s *subscriber) next() (messages.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.head == len(s.queue) {
		return nil, false
	}
	ev := s.queue[s.head]
	s.queue[s.head] = nil
	if s.head++; s.head == len(s.queue) {
		s.queue, s.head = s.queue[:0], 0
	}
	return ev, true
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

// events yields the queued events, then TurnEnded or the error that ended
// the subscription. Cancelling ctx ends it with ctx's error, and a session
// actor that stops without ending it (ref) with the reason it stopped;
// either, or breaking out of the loop, closes the subscription, which the
// session then drops.
func (s *subscriber) events(ctx context.Context, ref *sessionRef) iter.Seq2[messages.Event, error] {
	return func(yield func(messages.Event, error) bool) {
		defer s.fail(context.Canceled)
		for {
			if ev, ok := s.next(); ok {
				if !yield(ev, nil) {
					return
				}
				continue
			}
			select {
			case <-s.wake:
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

// drain yields what is left in the queue, then the end of the
// subscription.
func (s *subscriber) drain(yield func(messages.Event, error) bool) {
	for {
		ev, ok := s.next()
		if !ok {
			break
		}
		if !yield(ev, nil) {
			return
		}
	}
	final, err := s.result()
	if final != nil {
		yield(final, nil)
		return
	}
	yield(nil, err)
}
