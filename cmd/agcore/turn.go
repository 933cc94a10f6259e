package main

import (
	"context"
	"errors"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
)

// tickInterval paces the spinners of a terminal view.
const tickInterval = 100 * time.Millisecond

// streamEvent is one item of a session's event stream, passed from the
// goroutine that reads the stream to the one that renders it.
type streamEvent struct {
	session int
	ev      messages.Event
	err     error
}

// pump reads stream into out, tagging each item with session, and closes
// done when the stream ends. The stream is not tied to the command's
// context: an interrupt cancels the turn (Session.Cancel) and the stream
// then ends with the turn.
func pump(sess *actors.Session, session int, input messages.Message, out chan<- streamEvent, done chan<- int) {
	for ev, err := range sess.Stream(context.Background(), input) {
		out <- streamEvent{session: session, ev: ev, err: err}
		if err != nil {
			break
		}
	}
	done <- session
}

// playTurn runs one turn of sess and renders it. While it runs, lines
// read from input (may be nil) are passed to onLine; an interrupt (ctx
// done) cancels the turn. It returns the TurnEnded event, and ctx's cause
// when the turn was interrupted.
func playTurn(ctx context.Context, sess *actors.Session, msg messages.Message, r *renderer, input <-chan string, onLine func(string)) (messages.TurnEnded, error) {
	events := make(chan streamEvent, 64)
	done := make(chan int, 1)
	go pump(sess, 0, msg, events, done)
	ticker := time.NewTicker(tickInterval)
	defer ticker.Stop()
	var (
		end         messages.TurnEnded
		ended       bool
		streamErr   error
		interrupted bool
	)
	ctxDone := ctx.Done()
	for {
		select {
		case se := <-events:
			if se.err != nil {
				streamErr = se.err
				continue
			}
			r.event(se.ev)
			if e, ok := se.ev.(messages.TurnEnded); ok {
				end, ended = e, true
			}
		case <-done:
			for len(events) > 0 { // what the stream sent before it ended
				se := <-events
				if se.err != nil {
					streamErr = se.err
				} else {
					r.event(se.ev)
					if e, ok := se.ev.(messages.TurnEnded); ok {
						end, ended = e, true
					}
				}
			}
			switch {
			case interrupted:
				return end, context.Cause(ctx)
			case streamErr != nil:
				return end, streamErr
			case !ended:
				return end, errors.New("the event stream ended before the turn did")
			}
			return end, r.err
		case <-ticker.C:
			if r.spinning() {
				r.tick()
			}
		case line, ok := <-input:
			if !ok {
				input = nil
				continue
			}
			onLine(line)
		case <-ctxDone:
			ctxDone, interrupted = nil, true
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			_, _ = sess.Cancel(cctx)
			cancel()
		}
	}
}
