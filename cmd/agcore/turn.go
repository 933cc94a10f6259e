package main

import (
	"context"
	"errors"
	"strings"
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
func pump(sess *actors.Session, session int, input messages.Message, out chan<- streamEvent, done chan<- int, opts ...actors.SubmitOption) {
	for ev, err := range sess.Stream(context.Background(), input, opts...) {
		out <- streamEvent{session: session, ev: ev, err: err}
		if err != nil {
			break
		}
	}
	done <- session
}

// turnInput is what a turn reads besides its events: the lines of standard
// input and the calls to approve. The zero value reads nothing and asks
// nothing.
type turnInput struct {
	// lines are the lines of standard input, shared with the chat's own
	// prompt. A turn starts reading them when it first asks, if no one
	// has. Nil means none are read.
	lines *lineReader
	// onLine receives the lines typed while no call waits for an answer,
	// and /cancel at any time. Nil drops them: a line typed before a
	// question is shown never answers it.
	onLine func(string)
	// prompt asks about the calls that need approval. Nil asks none.
	prompt *approvalPrompt
	// questions asks the MCP servers' questions of the session. Nil asks
	// none (the runtime cancels them when they expire or the turn ends).
	questions *questionPrompt
	// submit are the options of the turn's submission (its output
	// schema). Nil submits the message alone.
	submit []actors.SubmitOption
}

// playTurn runs one turn of sess and renders it. While it runs, the calls
// that need approval are asked about, one at a time, with the live view
// paused; lines read from in.lines answer the call on screen, and go to
// in.onLine otherwise; an interrupt (ctx done) cancels the turn. It returns
// the TurnEnded event, and ctx's cause when the turn was interrupted.
func playTurn(ctx context.Context, sess *actors.Session, msg messages.Message, r *renderer, in turnInput) (messages.TurnEnded, error) {
	events := make(chan streamEvent, 64)
	done := make(chan int, 1)
	go pump(sess, 0, msg, events, done, in.submit...)
	ticker := time.NewTicker(tickInterval)
	defer ticker.Stop()
	var (
		end         messages.TurnEnded
		ended       bool
		streamErr   error
		interrupted bool
		inputEnded  bool
	)
	input := in.lines.started()
	order := newApprovalOrder(sess.ID())
	startInput := func() {
		if input == nil && in.lines != nil && !inputEnded {
			input = in.lines.lines()
		}
	}
	ask := func(q *approvalAsk) {
		in.prompt.add(q)
		if in.prompt.asking() {
			startInput()
		}
	}
	render := func(se streamEvent) {
		if se.err != nil {
			streamErr = se.err
			return
		}
		r.event(se.ev)
		switch e := se.ev.(type) {
		case messages.TurnEnded:
			end, ended = e, true
		case messages.ApprovalPending:
			if q := order.pending(e.CallID); q != nil {
				ask(q)
			}
		case messages.ElicitationPending:
			in.questions.pending(ctx, sess, e)
			if in.questions.asking() {
				startInput()
			}
		case messages.ElicitationAnswered:
			in.questions.answered(ctx, sess, e.ID)
		}
	}
	ctxDone := ctx.Done()
	for {
		select {
		case se := <-events:
			render(se)
		case <-done:
			in.prompt.drop()
			in.questions.drop()
			for len(events) > 0 { // what the stream sent before it ended
				render(<-events)
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
		case q := <-in.prompt.asks():
			if q = order.asked(q); q != nil {
				ask(q)
			}
		case <-in.prompt.expiry():
			in.prompt.expire()
		case line, ok := <-input:
			switch {
			case !ok:
				input, inputEnded = nil, true
				in.prompt.stop("standard input ended")
				in.questions.stop(ctx, sess, "standard input ended")
			case strings.TrimSpace(line) == "/cancel" && in.onLine != nil:
				in.prompt.lineTyped()
				in.onLine(line)
			case in.prompt.asking():
				in.prompt.answer(line)
			case in.questions.asking():
				in.questions.answer(ctx, sess, line)
			case in.onLine != nil:
				in.onLine(line)
			}
		case <-ctxDone:
			ctxDone, interrupted = nil, true
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			_, _ = sess.Cancel(cctx)
			cancel()
		}
	}
}
