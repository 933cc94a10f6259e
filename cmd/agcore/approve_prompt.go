package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agcore/agcore/toolsys"
)

// approvalPrompt asks the user about the calls an approver hands to the
// turn being played, one at a time, inside the loop that plays the turn
// (see playTurn): that loop owns the output, so the live view is paused
// while a question is on screen and resumed once no call waits. A nil
// *approvalPrompt asks nothing.
type approvalPrompt struct {
	ap   *approver
	w    io.Writer
	term term
	// r is the live view to pause while asking; nil when the questions go
	// to another stream than the view (run --json).
	r *renderer
	// queue holds the calls waiting behind cur, the call on screen.
	queue []*approvalAsk
	cur   *approvalAsk
	// midLine is true while the question's line waits for the answer.
	midLine bool
}

// newApprovalPrompt returns a prompt asking about ap's calls on w; r, when
// not nil, is the live view written to w.
func newApprovalPrompt(ap *approver, w io.Writer, t term, r *renderer) *approvalPrompt {
	return &approvalPrompt{ap: ap, w: w, term: t, r: r}
}

// asks returns the channel the approver hands calls on; nil for a nil
// prompt.
func (p *approvalPrompt) asks() <-chan *approvalAsk {
	if p == nil {
		return nil
	}
	return p.ap.asks
}

// asking reports whether a call is on screen.
func (p *approvalPrompt) asking() bool { return p != nil && p.cur != nil }

// expiry returns a channel closed when the call on screen no longer needs
// an answer; nil when none is.
func (p *approvalPrompt) expiry() <-chan struct{} {
	if !p.asking() {
		return nil
	}
	return p.cur.ctx.Done()
}

// add queues q, and shows it when no other call is on screen.
func (p *approvalPrompt) add(q *approvalAsk) {
	p.queue = append(p.queue, q)
	if p.cur == nil {
		p.next()
	}
}

// next shows the next call that still needs an answer, answering at once
// those an earlier answer allowed and, when no one can be asked any more,
// refusing them; with none left it resumes the live view.
func (p *approvalPrompt) next() {
	p.cur = nil
	for len(p.queue) > 0 {
		q := p.queue[0]
		p.queue = p.queue[1:]
		switch {
		case q.ctx.Err() != nil:
			// The call ended while it waited: the runtime has answered.
		case p.ap.allows(q.req):
			q.answer <- toolsys.Approval{Allow: true}
		case p.ap.unaskable() != "":
			q.answer <- p.ap.refuse(q.req, p.ap.unaskable())
		default:
			p.cur = q
			p.show()
			return
		}
	}
	if p.r != nil {
		p.r.resume()
	}
}

// show writes the question about the call on screen.
func (p *approvalPrompt) show() {
	if p.r != nil {
		p.r.pause()
	}
	deadline, _ := p.cur.ctx.Deadline()
	p.write(formatApproval(p.cur.req, deadline, p.ap.now(), p.term, p.ap.redactor))
	p.midLine = true
}

// answer takes line as the answer to the call on screen: y allows it
// once, a allows it and the calls like it (see sessionKey) until the
// process exits, n refuses it, with the rest of the line as the reason the
// model is told. Anything else is asked again.
func (p *approvalPrompt) answer(line string) {
	if !p.asking() {
		return
	}
	p.endLine(true)
	verb, reason, ok := parseAnswer(line)
	if !ok {
		p.write(p.term.red("  answer y, a or n (a reason after n is told to the model)") + "\n" + p.question())
		p.midLine = true
		return
	}
	q := p.cur
	switch verb {
	case 'y':
		q.answer <- toolsys.Approval{Allow: true}
		p.write("  " + p.term.green(markOK+" allowed once") + "\n")
	case 'a':
		p.ap.allowForSession(q.req)
		q.answer <- toolsys.Approval{Allow: true}
		p.write("  " + p.term.green(markOK+" allowed: "+scopeOf(q.req)+" runs without asking until agcore exits") + "\n")
	default:
		msg := "the user refused"
		note := markFail + " denied"
		if reason != "" {
			msg += ": " + reason
			note += fmt.Sprintf(": the model is told %q", reason)
		}
		q.answer <- toolsys.Approval{Reason: msg}
		p.write("  " + p.term.red(note) + "\n")
	}
	p.next()
}

// expire notes that the call on screen no longer needs an answer and
// moves on.
func (p *approvalPrompt) expire() {
	if !p.asking() {
		return
	}
	p.endLine(false)
	cause := context.Cause(p.cur.ctx)
	var note string
	switch {
	case errors.Is(cause, toolsys.ErrApprovalTimeout):
		note = fmt.Sprintf("approval expired: no answer within %s (permissions.approval_timeout); the call is denied", formatDuration(p.cur.req.Timeout))
	default:
		note = "the call ended before an answer (the turn was cancelled or stopped)"
	}
	p.write("  " + p.term.red(markFail+" "+note) + "\n")
	p.next()
}

// stop refuses the call on screen and every later one, because why (the
// input ended).
func (p *approvalPrompt) stop(why string) {
	if p == nil {
		return
	}
	p.ap.stopAsking(why)
	if !p.asking() {
		return
	}
	p.endLine(false)
	p.cur.answer <- p.ap.refuse(p.cur.req, why)
	p.write("  " + p.term.red(markFail+" denied: "+why) + "\n")
	p.next()
}

// drop forgets the calls left when the turn has ended (the runtime has
// answered them) and resumes the live view.
func (p *approvalPrompt) drop() {
	if p == nil {
		return
	}
	if p.cur != nil {
		p.endLine(false)
		p.write("  " + p.term.red(markFail+" the call ended before an answer") + "\n")
		p.cur = nil
	}
	p.queue = nil
	if p.r != nil {
		p.r.resume()
	}
}

// lineTyped notes that a line was typed while the question waited: the
// terminal's echo of it ended the question's line.
func (p *approvalPrompt) lineTyped() {
	if p.asking() {
		p.endLine(true)
	}
}

// endLine ends the question's line: typed reports whether an answer was
// typed, which a terminal echoes with its newline.
func (p *approvalPrompt) endLine(typed bool) {
	if p.midLine && !(typed && p.term.tty) {
		p.write("\n")
	}
	p.midLine = false
}

// write writes s. A failing stream is reported by the live view's
// renderer, which writes to the same stream (or, with --json, to the one
// that carries the events).
func (p *approvalPrompt) write(s string) { _, _ = io.WriteString(p.w, s) }

// question is the line that waits for the answer.
func (p *approvalPrompt) question() string {
	deadline, _ := p.cur.ctx.Deadline()
	return question(safeText(p.ap.redactor.String(p.cur.req.Tool)), deadline, p.ap.now(), p.term)
}
