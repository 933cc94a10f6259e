package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/toolsys"
)

// approver answers the approvals of run and chat (actors.Config.Approver).
// On a terminal it hands each call to the turn being played, which asks
// the user, one call at a time (see approvalPrompt). Without one it
// refuses the call: the model reads why and what the user can change, and
// standard error says it once per tool. A call that an earlier answer
// allowed for the rest of the process is allowed at once. It is safe for
// concurrent use: the runtime asks from the goroutines of parallel tool
// calls.
type approver struct {
	// asks carries the calls to ask about to the turn being played.
	asks chan *approvalAsk
	// errw receives the refusals made without a terminal, once per tool.
	errw io.Writer
	// redactor masks credentials in what the prompt and the refusals show.
	redactor *redact.Redactor
	// now reads the clock (the time left to answer).
	now func() time.Time

	mu sync.Mutex
	// noAsk says why no one can be asked ("standard input is not a
	// terminal"); empty while the user can be asked.
	noAsk string
	// quiet is true once asking stopped on a terminal (its input ended):
	// the prompt said why, so refusals write nothing more to errw, which
	// is the same terminal.
	quiet bool
	// allowed holds the keys (sessionKey) of the calls allowed until the
	// process exits.
	allowed map[string]bool
	// told holds the tools whose refusal standard error has shown.
	told map[string]bool
}

// approvalAsk is one call waiting for the user's answer.
type approvalAsk struct {
	// ctx is the call's approval context: it ends when the approval
	// expires (permissions.approval_timeout) or the turn is cancelled.
	ctx context.Context
	req toolsys.ApprovalRequest
	// answer receives the answer; buffered (1), written once.
	answer chan toolsys.Approval
}

// newApprover returns an approver that asks on the terminal, or, when
// noAsk says why it cannot, refuses every call that needs approval and
// tells errw.
func newApprover(noAsk string, errw io.Writer, r *redact.Redactor) *approver {
	return &approver{asks: make(chan *approvalAsk), errw: errw, redactor: r, now: time.Now,
		noAsk: noAsk, allowed: map[string]bool{}, told: map[string]bool{}}
}

// Approve implements toolsys.Approver: it allows a call allowed for the
// session, refuses one when no one can be asked, and otherwise waits for
// the user's answer, or for ctx to end.
func (ap *approver) Approve(ctx context.Context, req toolsys.ApprovalRequest) (toolsys.Approval, error) {
	if ap.allows(req) {
		return toolsys.Approval{Allow: true}, nil
	}
	if why := ap.unaskable(); why != "" {
		return ap.refuse(req, why), nil
	}
	q := &approvalAsk{ctx: ctx, req: req, answer: make(chan toolsys.Approval, 1)}
	select {
	case ap.asks <- q:
	case <-ctx.Done():
		return toolsys.Approval{}, ctx.Err()
	}
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		return toolsys.Approval{}, ctx.Err()
	}
}

// unaskable says why no one can be asked, or "" when the user can be.
func (ap *approver) unaskable() string {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	return ap.noAsk
}

// stopAsking makes every later call be refused, for the reason why,
// which the prompt has shown.
func (ap *approver) stopAsking(why string) {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	if ap.noAsk == "" {
		ap.noAsk, ap.quiet = why, true
	}
}

// sessionKey identifies the calls an "allow for this session" answer to
// req allows: the same tool on the same subject (the command line of bash,
// the path of a file tool), or, when the rules cannot vouch for the
// subject alone (the call is Opaque or Unresolved: it sets variables,
// redirects to a file...), the same tool with the same arguments. exact
// reports the latter.
func sessionKey(req toolsys.ApprovalRequest) (key string, exact bool) {
	if req.Subjects.Opaque != "" || req.Subjects.Unresolved != "" {
		return req.Tool + "\x00arguments\x00" + compactJSON(req.Args), true
	}
	return req.Tool + "\x00subject\x00" + req.Subject, false
}

// compactJSON is raw without insignificant space, or raw itself when it
// is not JSON.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// allows reports whether an earlier answer allowed req for the session.
func (ap *approver) allows(req toolsys.ApprovalRequest) bool {
	key, _ := sessionKey(req)
	ap.mu.Lock()
	defer ap.mu.Unlock()
	return ap.allowed[key]
}

// allowForSession allows the calls like req (see sessionKey) until the
// process exits.
func (ap *approver) allowForSession(req toolsys.ApprovalRequest) {
	key, _ := sessionKey(req)
	ap.mu.Lock()
	defer ap.mu.Unlock()
	ap.allowed[key] = true
}

// refuse refuses req because no one can be asked (why), telling errw once
// per tool what the user can change, and the model the same.
func (ap *approver) refuse(req toolsys.ApprovalRequest, why string) toolsys.Approval {
	allow := allowFlags(req, ap.redactor)
	mode := modeFlag(req.Permission)
	ap.mu.Lock()
	first := !ap.told[req.Tool] && !ap.quiet
	ap.told[req.Tool] = true
	ap.mu.Unlock()
	tool := safeText(req.Tool)
	if first {
		fix := "pass " + allow
		if mode != "" {
			fix += ", or " + mode
		}
		fmt.Fprintf(ap.errw, "agcore: %s was not run: it needs approval (%s), and %s, so no one can be asked. "+
			"To let such calls run without asking, %s, or add the rule to permissions.allow in the configuration file. "+
			"Said once per tool.\n", tool, oneLine(safeText(ap.redactor.String(req.Reason)), 200), why, fix)
	}
	reason := fmt.Sprintf("the call needs approval and no one could be asked (%s); the user can let such calls run with %s", why, allow)
	if mode != "" {
		reason += ", " + mode
	}
	return toolsys.Approval{Reason: reason + " or a permissions.allow rule in the configuration file"}
}

// modeFlag is the --permission-mode that runs calls of permission p
// without asking, or "" when no mode is meant for it.
func modeFlag(p toolsys.Permission) string {
	switch {
	case p == toolsys.PermWrite:
		return "--permission-mode accept-edits (runs file edits)"
	case p >= toolsys.PermExecute:
		return "--permission-mode bypass (runs every tool)"
	}
	return ""
}

// Bounds of a subject that allowFlags writes into a rule.
const ruleSubjectMax = 80

// allowFlags returns the --allow flags that let calls like req run
// without asking: one rule per part of the subject ("--allow 'bash(touch
// made.txt)'"), when each part can be written into a rule and the rules
// do allow req; else a rule on the whole tool ("--allow bash (every bash
// call)"). Each suggestion is checked against a permission pipeline that
// holds it alone.
func allowFlags(req toolsys.ApprovalRequest, r *redact.Redactor) string {
	if rules := subjectRules(req, r); rules != nil && allowedBy(req, rules) {
		flags := make([]string, len(rules))
		for i, rule := range rules {
			flags[i] = "--allow " + shellQuote(rule)
		}
		return strings.Join(flags, " ")
	}
	tool := safeText(req.Tool)
	return fmt.Sprintf("--allow %s (every %s call)", shellQuote(tool), tool)
}

// subjectRules returns a rule per part of req's subject, or nil when a
// part cannot be written into a rule that matches it alone: a subject
// that is empty, long, on several lines, holds glob characters,
// characters a terminal would not show as they are, or a credential, or a
// call the rules cannot vouch for (Opaque or Unresolved).
func subjectRules(req toolsys.ApprovalRequest, r *redact.Redactor) []string {
	if req.Subjects.Opaque != "" || req.Subjects.Unresolved != "" {
		return nil
	}
	parts := req.Subjects.Parts
	if len(parts) == 0 {
		parts = []string{req.Subject}
	}
	if len(parts) > 3 {
		return nil
	}
	rules := make([]string, 0, len(parts))
	for _, p := range parts {
		if p == "" || strings.TrimSpace(p) != p || utf8.RuneCountInString(p) > ruleSubjectMax ||
			strings.ContainsAny(p, "*?\n") || safeText(p) != p || r.String(p) != p {
			return nil
		}
		rule := req.Tool + "(" + p + ")"
		if !utf8.ValidString(rule) {
			return nil // toolsys.ParseRule compiles the rule as given
		}
		if _, err := toolsys.ParseRule(rule); err != nil {
			return nil
		}
		rules = append(rules, rule)
	}
	return rules
}

// allowedBy reports whether a permission pipeline holding the allow rules
// alone runs req without asking.
func allowedBy(req toolsys.ApprovalRequest, rules []string) bool {
	for _, r := range rules {
		if !utf8.ValidString(r) {
			return false
		}
	}
	p, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeAsk, Allow: rules})
	return err == nil && p.Check(context.Background(), req.Request) == nil
}

// shellQuote quotes s for a POSIX shell, leaving alone a word that needs
// no quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
