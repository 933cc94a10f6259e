package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agcore/agcore/redact"
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
		note = fmt.Sprintf("no answer within %s: the call is denied", formatDuration(p.cur.req.Timeout))
	case errors.Is(cause, context.DeadlineExceeded):
		note = "the call's deadline passed before an answer (limits.tool_timeout): it is not run"
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

// question is the line that waits for the answer about tool, with the
// time left before deadline (zero when there is none): "allow bash? (59s
// left) [y/a/n] ".
func question(tool string, deadline, now time.Time, t term) string {
	left := ""
	if !deadline.IsZero() {
		left = " " + t.dim("("+timeLeft(deadline.Sub(now))+")")
	}
	return t.bold("allow "+tool+"?") + left + t.bold(" [y/a/n] ")
}

// parseAnswer reads an answer: y or yes, a or always, n or no followed by
// an optional reason. Case does not matter.
func parseAnswer(line string) (verb byte, reason string, ok bool) {
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(word) {
	case "y", "yes":
		if rest == "" {
			return 'y', "", true
		}
	case "a", "always":
		if rest == "" {
			return 'a', "", true
		}
	case "n", "no":
		return 'n', oneLine(rest, 500), true
	}
	return 0, "", false
}

// Bounds of what the prompt shows of a call.
const (
	promptSubjectLines = 40
	promptSubjectRunes = 4000
	promptArgsRunes    = 300
)

// formatApproval renders the question about req: the tool and why it
// needs approval, its subject (the command line, the path) and its other
// arguments, what each answer does, and the line that waits for the
// answer, with the time left before deadline (zero when there is none). Everything
// that comes from the model is masked by r and made safe for a terminal
// (see safeText).
func formatApproval(req toolsys.ApprovalRequest, deadline, now time.Time, t term, r *redact.Redactor) string {
	show := func(s string) string { return safeText(r.String(s)) }
	tool := show(req.Tool)
	var b strings.Builder
	b.WriteString(t.cyan("?") + " " + t.bold(tool+" needs approval"))
	if req.Reason != "" {
		b.WriteString(": " + oneLine(show(req.Reason), 300))
	}
	b.WriteString("\n")
	label, subject, others := subjectView(req)
	subject = show(subject)
	if lines := strings.Split(subject, "\n"); len(lines) == 1 && label != "" {
		b.WriteString("  " + label + ": " + subject + "\n")
	} else {
		if label != "" {
			b.WriteString("  " + label + ":\n")
		}
		b.WriteString(indentBlock(subject))
	}
	if others != "" {
		b.WriteString("  " + t.dim("other arguments: "+truncate(show(others), promptArgsRunes)) + "\n")
	}
	b.WriteString("  " + t.dim("y: allow once · a: allow "+scopeOf(req)+" until agcore exits · n [reason]: deny") + "\n")
	b.WriteString(question(tool, deadline, now, t))
	return b.String()
}

// indentBlock indents every line of a multi-line subject under a bar,
// showing at most promptSubjectLines lines and promptSubjectRunes runes.
func indentBlock(s string) string {
	cut := 0
	if n := utf8.RuneCountInString(s); n > promptSubjectRunes {
		s = string([]rune(s)[:promptSubjectRunes])
		cut = n - promptSubjectRunes
	}
	lines := strings.Split(s, "\n")
	more := 0
	if len(lines) > promptSubjectLines {
		more = len(lines) - promptSubjectLines
		lines = lines[:promptSubjectLines]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  │ " + l + "\n")
	}
	switch {
	case more > 0:
		fmt.Fprintf(&b, "  │ … %d more lines not shown (answer n if unsure)\n", more)
	case cut > 0:
		fmt.Fprintf(&b, "  │ … %d more characters not shown (answer n if unsure)\n", cut)
	}
	return b.String()
}

// subjectView splits req's arguments for the prompt: the label of the
// subject (the argument that holds it, such as "command"; "subject" when
// none holds it as it is; "arguments" when the subject is the arguments
// themselves), the subject, and the other arguments as compact JSON ("" when
// there are none).
func subjectView(req toolsys.ApprovalRequest) (label, subject, others string) {
	all := compactJSON(req.Args)
	if req.Subject == "" || req.Subject == all {
		return "arguments", all, ""
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(req.Args, &args); err != nil {
		return "subject", req.Subject, all
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		var v string
		if json.Unmarshal(args[k], &v) == nil && v == req.Subject {
			delete(args, k)
			label = k
			break
		}
	}
	if label == "" {
		return "subject", req.Subject, all
	}
	if len(args) > 0 {
		b, err := json.Marshal(args)
		if err == nil {
			others = string(b)
		}
	}
	return label, req.Subject, others
}

// scopeOf says which calls the answer a allows: "bash with this command",
// or "this exact bash call" when the rules cannot vouch for the subject
// alone (see sessionKey).
func scopeOf(req toolsys.ApprovalRequest) string {
	tool := safeText(req.Tool)
	if _, exact := sessionKey(req); exact {
		return "this exact " + tool + " call (same arguments)"
	}
	label, _, _ := subjectView(req)
	switch label {
	case "arguments":
		return tool + " with these arguments"
	case "subject":
		return tool + " on this subject"
	}
	return tool + " with this " + safeText(label)
}

// timeLeft says how long the user has to answer: "59s left".
func timeLeft(d time.Duration) string {
	if d < time.Second {
		return "under a second left"
	}
	return formatDuration(d.Round(time.Second)) + " left"
}

// safeText makes s safe to show on a terminal as it is: control
// characters other than newline and tab, Unicode format characters (the
// bidirectional overrides that make text read otherwise than it runs,
// zero-width characters), line and paragraph separators, and invalid UTF-8
// are shown as escapes (\x1b, \u202e, \ufffd) rather than passed to the
// terminal or dropped, so that what the prompt shows is what the call
// holds.
func safeText(s string) string {
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
