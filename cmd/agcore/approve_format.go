package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/toolsys"
)

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
