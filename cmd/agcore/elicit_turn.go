package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/toolsys/mcp"
)

// questionPrompt asks the user, inside the loop that plays a turn (see
// playTurn), the questions MCP servers ask during the turn's tool calls
// (elicitation), one at a time: each field of the form in turn (Enter
// keeps the default; the choices of an enum are shown), then accept,
// decline or cancel; a question in URL mode shows its URL and asks the
// same choice. A question is asked once the turn's stream has shown its
// elicitation_pending, so that what the model said before is on screen
// first. Without a terminal, each question is cancelled at once and
// standard error says why. A nil *questionPrompt asks nothing.
type questionPrompt struct {
	w    io.Writer
	errw io.Writer
	term term
	// r is the live view to pause while asking; nil when the questions go
	// to another stream than the view (run --json).
	r        *renderer
	redactor *redact.Redactor
	// noAsk says why no one can be asked; empty while the user can be.
	noAsk func() string

	queue []actors.PendingElicitation
	cur   *questionState
}

// questionState is the question on screen and the answers given so far.
type questionState struct {
	q       actors.PendingElicitation
	fields  []string
	next    int // the field asked now; len(fields) when choosing
	content map[string]any
}

// newQuestionPrompt returns a prompt that asks on w (the live view r, when
// not nil, is written there too), and that cancels every question for the
// reason noAsk gives, when it gives one, telling errw.
func newQuestionPrompt(w, errw io.Writer, t term, r *renderer, red *redact.Redactor, noAsk func() string) *questionPrompt {
	return &questionPrompt{w: w, errw: errw, term: t, r: r, redactor: red, noAsk: noAsk}
}

// asking reports whether a question is on screen.
func (p *questionPrompt) asking() bool { return p != nil && p.cur != nil }

// pending takes the ElicitationPending of the turn's session: the question
// is read from the session (its form is not in the event) and asked, or
// cancelled when no one can be asked.
func (p *questionPrompt) pending(ctx context.Context, sess *actors.Session, e messages.ElicitationPending) {
	if p == nil {
		return
	}
	ps, err := sess.Elicitations(ctx)
	if err != nil {
		return
	}
	for _, q := range ps {
		if q.ID != e.ID {
			continue
		}
		if why := p.noAsk(); why != "" {
			p.cancel(ctx, sess, q, why)
			return
		}
		p.queue = append(p.queue, q)
		if p.cur == nil {
			p.show(ctx, sess)
		}
		return
	}
}

// cancel cancels q because no one can be asked (why), and says so on
// standard error.
func (p *questionPrompt) cancel(ctx context.Context, sess *actors.Session, q actors.PendingElicitation, why string) {
	_ = sess.AnswerElicitation(ctx, q.ID, mcp.ElicitAnswer{Action: mcp.ElicitCancel})
	fmt.Fprintf(p.errw, "agcore: MCP server %s asked a question (%s), and %s, so no one can answer it: it was cancelled. "+
		"Run agcore on a terminal to answer the servers' questions.\n",
		safeText(q.Server), oneLine(safeText(p.redactor.String(q.Message)), 200), why)
}

// answered notes that the question id was answered elsewhere, or expired:
// it is no longer asked.
func (p *questionPrompt) answered(ctx context.Context, sess *actors.Session, id string) {
	if p == nil {
		return
	}
	p.queue = removeQuestion(p.queue, id)
	if p.cur != nil && p.cur.q.ID == id {
		p.write("\n  " + p.term.red(markFail+" the question was cancelled before an answer (it expired, or the call ended)") + "\n")
		p.cur = nil
		p.show(ctx, sess)
	}
}

func removeQuestion(qs []actors.PendingElicitation, id string) []actors.PendingElicitation {
	out := qs[:0]
	for _, q := range qs {
		if q.ID != id {
			out = append(out, q)
		}
	}
	return out
}

// show puts the next question on screen, or resumes the live view when
// none is left.
func (p *questionPrompt) show(_ context.Context, _ *actors.Session) {
	if len(p.queue) == 0 {
		if p.r != nil {
			p.r.resume()
		}
		return
	}
	q := p.queue[0]
	p.queue = p.queue[1:]
	if p.r != nil {
		p.r.pause()
	}
	p.cur = &questionState{q: q, fields: q.Fields(), content: map[string]any{}}
	p.write(fmt.Sprintf("\n%s %s\n", p.term.bold("? MCP server "+safeText(q.Server)+" asks:"), safeText(p.redactor.String(q.Message))))
	if q.Mode == "url" {
		p.write("  It asks you to open: " + safeText(p.redactor.String(q.URL)) + "\n")
		p.cur.fields = nil
	}
	p.prompt()
}

// prompt writes the line that waits for the next answer.
func (p *questionPrompt) prompt() {
	c := p.cur
	if c.next >= len(c.fields) {
		p.write("  Send the answer? [a]ccept, [d]ecline, [c]ancel: ")
		return
	}
	name := c.fields[c.next]
	label := safeText(name)
	if s := c.q.Schema.Properties[name]; s != nil {
		if s.Description != "" {
			label += " (" + safeText(s.Description) + ")"
		}
		if len(s.Enum) > 0 {
			label += fmt.Sprintf(" %v", s.Enum)
		}
		if len(s.Default) > 0 {
			label += " [" + safeText(string(s.Default)) + "]"
		}
	}
	p.write("  " + label + ": ")
}

// answer takes line as the answer to the field on screen, or as the
// choice once every field was asked.
func (p *questionPrompt) answer(ctx context.Context, sess *actors.Session, line string) {
	if !p.asking() {
		return
	}
	c := p.cur
	if !p.term.tty {
		p.write("\n") // a terminal ends the line with the echo of the answer
	}
	line = strings.TrimSpace(line)
	if c.next < len(c.fields) {
		name := c.fields[c.next]
		if line != "" {
			v, err := parseElicitValue(c.q.Schema.Properties[name], line)
			if err != nil {
				p.write("  " + p.term.red(err.Error()) + "\n")
				p.prompt()
				return
			}
			c.content[name] = v
		}
		c.next++
		if c.next == len(c.fields) {
			if _, err := mcp.ApplyElicitationSchema(c.q.Schema, c.content); err != nil {
				p.write("  " + p.term.red(safeText(err.Error())+"; please answer again") + "\n")
				c.next, c.content = 0, map[string]any{}
			}
		}
		p.prompt()
		return
	}
	var ans mcp.ElicitAnswer
	switch strings.ToLower(line) {
	case "a", "accept", "y", "yes":
		ans = mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: c.content}
		if c.q.Mode != "form" {
			ans.Content = nil
		}
	case "d", "decline", "n", "no":
		ans = mcp.ElicitAnswer{Action: mcp.ElicitDecline}
	case "c", "cancel":
		ans = mcp.ElicitAnswer{Action: mcp.ElicitCancel}
	default:
		p.prompt()
		return
	}
	p.cur = nil
	if err := sess.AnswerElicitation(ctx, c.q.ID, ans); err != nil {
		p.write("  " + p.term.red(markFail+" "+safeText(userMessage(err))) + "\n")
	} else {
		p.write("  " + p.term.green(markOK+" "+string(ans.Action)+" sent to "+safeText(c.q.Server)) + "\n")
	}
	p.show(ctx, sess)
}

// stop cancels the question on screen and every later one, because why
// (the input ended).
func (p *questionPrompt) stop(ctx context.Context, sess *actors.Session, why string) {
	if p == nil {
		return
	}
	reason := p.noAsk
	p.noAsk = func() string {
		if r := reason(); r != "" {
			return r
		}
		return why
	}
	qs := p.queue
	if p.cur != nil {
		qs = append([]actors.PendingElicitation{p.cur.q}, qs...)
		p.write("\n")
	}
	p.cur, p.queue = nil, nil
	for _, q := range qs {
		_ = sess.AnswerElicitation(ctx, q.ID, mcp.ElicitAnswer{Action: mcp.ElicitCancel})
		p.write("  " + p.term.red(markFail+" question of "+safeText(q.Server)+" cancelled: "+why) + "\n")
	}
	if p.r != nil && len(qs) > 0 {
		p.r.resume()
	}
}

// drop forgets the questions left when the turn has ended (the runtime
// has cancelled them).
func (p *questionPrompt) drop() {
	if p == nil {
		return
	}
	if p.cur != nil {
		p.write("\n  " + p.term.red(markFail+" the turn ended before an answer") + "\n")
		if p.r != nil {
			p.r.resume()
		}
	}
	p.cur, p.queue = nil, nil
}

func (p *questionPrompt) write(s string) { _, _ = io.WriteString(p.w, s) }
