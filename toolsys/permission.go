package toolsys

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Mode is the permission mode: how much runs without asking.
type Mode int

// The permission modes. The zero Mode is ModeAsk.
const (
	// ModeAsk runs tools up to PermReadOnly; anything more asks the approver
	// unless an allow rule matches.
	ModeAsk Mode = iota
	// ModeReadOnly runs only PermNone and PermReadOnly tools; allow rules
	// and the approver cannot widen it.
	ModeReadOnly
	// ModeAcceptEdits runs tools up to PermWrite; PermExecute asks unless an
	// allow rule matches.
	ModeAcceptEdits
	// ModeBypass runs everything that no hook or deny rule stops.
	ModeBypass
)

// String returns "ask", "read-only", "accept-edits" or "bypass".
func (m Mode) String() string {
	switch m {
	case ModeAsk:
		return "ask"
	case ModeReadOnly:
		return "read-only"
	case ModeAcceptEdits:
		return "accept-edits"
	case ModeBypass:
		return "bypass"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// ParseMode parses the names String returns.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "ask", "default":
		return ModeAsk, nil
	case "read-only", "readonly", "plan":
		return ModeReadOnly, nil
	case "accept-edits", "acceptEdits":
		return ModeAcceptEdits, nil
	case "bypass", "bypassPermissions":
		return ModeBypass, nil
	}
	return 0, fmt.Errorf("unknown permission mode %q (want ask, read-only, accept-edits or bypass)", s)
}

// Decision is a permission hook's verdict.
type Decision int

// The hook decisions. The zero Decision is DecisionContinue.
const (
	// DecisionContinue leaves the call to the next hook and the rest of the
	// pipeline.
	DecisionContinue Decision = iota
	// DecisionAllow runs the call without consulting the mode, the allow
	// rules or the approver. Deny rules still apply.
	DecisionAllow
	// DecisionDeny refuses the call.
	DecisionDeny
	// DecisionAsk sends the call to the approver, whatever the mode and the
	// allow rules say. Deny rules still apply.
	DecisionAsk
)

// String returns "continue", "allow", "deny" or "ask".
func (d Decision) String() string {
	switch d {
	case DecisionContinue:
		return "continue"
	case DecisionAllow:
		return "allow"
	case DecisionDeny:
		return "deny"
	case DecisionAsk:
		return "ask"
	}
	return fmt.Sprintf("decision(%d)", int(d))
}

// Request is a tool call as the permission pipeline sees it. Args still
// hold secret placeholders, never secret values.
type Request struct {
	Tool       string
	Permission Permission
	// Args are the call's raw arguments.
	Args json.RawMessage
	// Subject is the call's subject as a whole (see RuleSubjecter): the
	// command line of a shell call, the path of a file tool. Deny rules
	// match it; allow rules match it when Subjects has no Parts.
	Subject string
	// Subjects are the call's parts (see MultiRuleSubjecter): a deny rule
	// that matches any part refuses the call; allow rules allow it only if
	// each part is matched by some allow rule and nothing is Opaque.
	Subjects  Subjects
	SessionID string
	CallID    string
}

// PermissionHook inspects a call first. It returns a decision and, for
// DecisionDeny and DecisionAsk, a reason shown to the model or the approver.
// Hooks run in order; the first that does not return DecisionContinue
// decides. A hook must be safe for concurrent use.
type PermissionHook func(ctx context.Context, req Request) (Decision, string)

// ApprovalRequest is what an approver is asked.
type ApprovalRequest struct {
	Request
	// Reason says why approval is needed ("write_file needs write
	// permission in ask mode", or a hook's reason).
	Reason string
	// Timeout is how long the approver has to answer (the pipeline's
	// approval timeout). When it passes, the approver's context ends with
	// the cause ErrApprovalTimeout.
	Timeout time.Duration
}

// Approval is an approver's answer.
type Approval struct {
	Allow bool
	// Reason is shown to the model when the call is denied.
	Reason string
}

// Approver answers approval requests: a human in a front end, a policy, an
// HTTP callback. Approve may block until the answer comes; it must return
// when ctx is done. It must be safe for concurrent use.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Approval, error)
}

// ErrApprovalTimeout is the cause (context.Cause) of an approver's context
// once the approval timeout has passed, so that an approver can tell a
// timeout from the call's own cancellation.
var ErrApprovalTimeout = errors.New("toolsys: approval timed out")

// approverKey is the context key of WithApprover.
type approverKey struct{}

// WithApprover returns a copy of ctx carrying a. A call made with that
// context (Registry.Call, Permissions.Check) asks a instead of the
// pipeline's PermissionConfig.Approver when it needs approval; the
// approval timeout still applies. A runtime uses it to put its own
// approver, which records each request and answer, in front of the human
// or policy that decides. A nil a leaves ctx unchanged.
func WithApprover(ctx context.Context, a Approver) context.Context {
	if a == nil {
		return ctx
	}
	return context.WithValue(ctx, approverKey{}, a)
}

// ApproverFromContext returns the approver WithApprover put in ctx, or nil.
func ApproverFromContext(ctx context.Context) Approver {
	a, _ := ctx.Value(approverKey{}).(Approver)
	return a
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (Approval, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (Approval, error) {
	return f(ctx, req)
}

// Stage names the step of the pipeline that refused a call.
type Stage string

// The stages of the permission pipeline, in order.
const (
	StageHook     Stage = "hook"
	StageDeny     Stage = "deny rule"
	StageMode     Stage = "mode"
	StageAllow    Stage = "allow rule"
	StageApprover Stage = "approver"
)

// ErrPermissionDenied is matched (errors.Is) by every *PermissionError.
var ErrPermissionDenied = errors.New("permission denied")

// PermissionError is a refused call: which tool, which stage, and why.
type PermissionError struct {
	Tool   string
	Stage  Stage
	Reason string
}

// Error implements error.
func (e *PermissionError) Error() string {
	return fmt.Sprintf("permission denied for tool %s by %s: %s", e.Tool, e.Stage, e.Reason)
}

// Is reports whether target is ErrPermissionDenied.
func (e *PermissionError) Is(target error) bool { return target == ErrPermissionDenied }

// DefaultApprovalTimeout is how long an approver has to answer when
// PermissionConfig.ApprovalTimeout is zero.
const DefaultApprovalTimeout = 5 * time.Minute

// PermissionConfig configures a permission pipeline. The zero value is the
// safe default, and the one a Registry uses when it is given no pipeline:
// ModeAsk with no rules, no hooks and no approver, so tools up to
// PermReadOnly run and PermWrite and PermExecute calls are refused for want
// of an approver (unless the call's context carries one, see WithApprover).
// A program that wants calls to run without asking says so: ModeAcceptEdits,
// ModeBypass, Allow rules or an Approver.
type PermissionConfig struct {
	// Mode is the permission mode. Zero means ModeAsk.
	Mode Mode
	// Hooks run first, in order.
	Hooks []PermissionHook
	// Deny rules refuse matching calls in every mode, bypass included.
	Deny []string
	// Allow rules run matching calls without asking (in ModeAsk and
	// ModeAcceptEdits; ModeReadOnly is never widened).
	Allow []string
	// Approver answers calls that need approval. Nil means such calls are
	// denied. An approver carried by the call's context (WithApprover) is
	// asked in its place.
	Approver Approver
	// ApprovalTimeout bounds the wait for the approver; when it passes the
	// approval has expired, which is a denial ("approval expired: no answer
	// within ..."). It is separate from the call's own deadline, which
	// starts once the call is let through (see WithCallTimeout). Zero means
	// DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// Remedy ends the reason of a call refused for want of an approver: it
	// tells the operator what to change so that such calls can run. Empty
	// means naming this struct's Mode, Allow and Approver fields; a program
	// that builds the pipeline from its own settings names those instead
	// (the agcore command line names permissions.mode and permissions.allow).
	Remedy string
}

// defaultRemedy is the Remedy of a PermissionConfig that has none.
const defaultRemedy = "to run such calls, set PermissionConfig.Mode (ModeAcceptEdits runs write tools, " +
	"ModeBypass runs every tool), add an Allow rule that matches the call, or configure an Approver"

// Permissions is a compiled permission pipeline: hooks, deny rules, mode,
// allow rules, approver, in that order. It is safe for concurrent use.
type Permissions struct {
	mode     Mode
	hooks    []PermissionHook
	deny     []Rule
	allow    []Rule
	approver Approver
	timeout  time.Duration
	remedy   string
}

// defaultPermissions is the pipeline of the zero PermissionConfig, which a
// Registry without one uses.
func defaultPermissions() *Permissions {
	return &Permissions{mode: ModeAsk, timeout: DefaultApprovalTimeout, remedy: defaultRemedy}
}

// NewPermissions compiles cfg. An invalid rule is an error naming it.
func NewPermissions(cfg PermissionConfig) (*Permissions, error) {
	if cfg.Mode < ModeAsk || cfg.Mode > ModeBypass {
		return nil, fmt.Errorf("permissions: Mode: unknown %v", cfg.Mode)
	}
	p := &Permissions{
		mode:     cfg.Mode,
		hooks:    append([]PermissionHook(nil), cfg.Hooks...),
		approver: cfg.Approver,
		timeout:  cfg.ApprovalTimeout,
		remedy:   cmp.Or(cfg.Remedy, defaultRemedy),
	}
	if p.timeout <= 0 {
		p.timeout = DefaultApprovalTimeout
	}
	for _, s := range cfg.Deny {
		r, err := ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("permissions: Deny: %w", err)
		}
		p.deny = append(p.deny, r)
	}
	for _, s := range cfg.Allow {
		r, err := ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("permissions: Allow: %w", err)
		}
		p.allow = append(p.allow, r)
	}
	return p, nil
}

// usesSubject reports whether any hook or rule may look at a call's
// subject, which is otherwise not computed.
func (p *Permissions) usesSubject() bool {
	return len(p.hooks) > 0 || len(p.deny) > 0 || len(p.allow) > 0 || p.approver != nil
}

// mayAsk reports whether a call that needs perm reaches the approver when
// no hook or rule decides it: the mode neither admits it nor refuses it
// outright (see Check). Only then does an approver that comes with the
// call (WithApprover) read its subject.
func (p *Permissions) mayAsk(perm Permission) bool {
	switch p.mode {
	case ModeBypass, ModeReadOnly:
		return false
	case ModeAcceptEdits:
		return perm > PermWrite
	}
	return perm > PermReadOnly
}

// Mode returns the pipeline's mode.
func (p *Permissions) Mode() Mode { return p.mode }

// Check runs the pipeline for one call. It returns nil when the call may
// run, a *PermissionError when it is refused, and ctx's error (wrapped) when
// ctx ends while the approver is deciding.
//
// The order is: hooks (the first non-Continue decision counts; Deny refuses
// at once), deny rules (refuse in every mode), then, unless a hook allowed
// or asked, the mode (read-only refuses anything above PermReadOnly; bypass
// allows; ask and accept-edits allow up to PermReadOnly and PermWrite), the
// allow rules, and finally the approver, which must answer within the
// approval timeout.
//
// A deny rule refuses the call if its pattern matches the Subject or any of
// the Subjects' Parts; one with an argument pattern also refuses a call
// whose Subjects are Unresolved (fail closed). Allow rules allow it only if
// every part is matched by one of them; a call whose Subjects are Opaque or
// Unresolved is allowed only by a rule without an argument pattern, and
// otherwise goes to the approver.
//
// Rules are a guard-rail against the honest mistakes of a model; the
// security boundary of a tool that runs programs is the confinement it
// runs in (for bash, the kernel's).
func (p *Permissions) Check(ctx context.Context, req Request) error {
	decision, reason := DecisionContinue, ""
	for _, h := range p.hooks {
		decision, reason = h(ctx, req)
		if decision != DecisionContinue {
			break
		}
	}
	if decision == DecisionDeny {
		if reason == "" {
			reason = "refused by a permission hook"
		}
		return &PermissionError{Tool: req.Tool, Stage: StageHook, Reason: reason}
	}
	if err := p.denied(req); err != nil {
		return err
	}
	switch decision {
	case DecisionAllow:
		return nil
	case DecisionAsk:
		if reason == "" {
			reason = "a permission hook asks for approval"
		}
		return p.ask(ctx, req, reason)
	}
	switch p.mode {
	case ModeBypass:
		return nil
	case ModeReadOnly:
		if req.Permission <= PermReadOnly {
			return nil
		}
		return &PermissionError{Tool: req.Tool, Stage: StageMode,
			Reason: fmt.Sprintf("tool needs %s permission and the mode is read-only", req.Permission)}
	case ModeAcceptEdits:
		if req.Permission <= PermWrite {
			return nil
		}
	default:
		if req.Permission <= PermReadOnly {
			return nil
		}
	}
	if p.allowed(req) {
		return nil
	}
	reason = fmt.Sprintf("tool %s needs %s permission in %s mode", req.Tool, req.Permission, p.mode)
	if why := cmp.Or(req.Subjects.Unresolved, req.Subjects.Opaque); why != "" {
		reason += "; allow rules cannot vouch for it: " + why
	}
	return p.ask(ctx, req, reason)
}

// denied returns the refusal of the first deny rule that matches req (its
// Subject or a part), else, when req is Unresolved, of the first deny rule
// with an argument pattern on the tool: an unresolved command cannot be
// shown not to be the one such a rule denies.
func (p *Permissions) denied(req Request) error {
	for _, r := range p.deny {
		if r.denies(req) {
			return &PermissionError{Tool: req.Tool, Stage: StageDeny, Reason: fmt.Sprintf("matches deny rule %s", r)}
		}
	}
	if req.Subjects.Unresolved == "" {
		return nil
	}
	for _, r := range p.deny {
		if r.toolRE.MatchString(req.Tool) {
			return &PermissionError{Tool: req.Tool, Stage: StageDeny,
				Reason: fmt.Sprintf("deny rule %s applies: %s, so nothing shows it is not what the rule denies", r, req.Subjects.Unresolved)}
		}
	}
	return nil
}

// allowed reports whether the allow rules allow req: a rule without an
// argument pattern allows every call of its tools; otherwise each subject
// (the Parts, or Subject when there are none) must be matched by some allow
// rule, and a call that is Opaque or Unresolved is never allowed.
func (p *Permissions) allowed(req Request) bool {
	for _, r := range p.allow {
		if !r.hasArg && r.toolRE.MatchString(req.Tool) {
			return true
		}
	}
	if req.Subjects.Opaque != "" || req.Subjects.Unresolved != "" {
		return false
	}
	parts := req.Subjects.Parts
	if len(parts) == 0 {
		parts = []string{req.Subject}
	}
	for _, s := range parts {
		if !slices.ContainsFunc(p.allow, func(r Rule) bool { return r.matchAllow(req.Tool, s) }) {
			return false
		}
	}
	return true
}

// ask consults the approver (the context's, else the configured one) with
// the approval timeout.
func (p *Permissions) ask(ctx context.Context, req Request, reason string) error {
	approver := ApproverFromContext(ctx)
	if approver == nil {
		approver = p.approver
	}
	if approver == nil {
		return &PermissionError{Tool: req.Tool, Stage: StageApprover,
			Reason: "approval required (" + reason + ") but no approver is configured; " + p.remedy}
	}
	actx, cancel := context.WithTimeoutCause(ctx, p.timeout, ErrApprovalTimeout)
	defer cancel()
	type answer struct {
		a   Approval
		err error
	}
	done := make(chan answer, 1) // buffered: a late answer never blocks the approver
	go func() {
		a, err := approver.Approve(actx, ApprovalRequest{Request: req, Reason: reason, Timeout: p.timeout})
		done <- answer{a, err}
	}()
	select {
	case ans := <-done:
		switch {
		case ans.err != nil && ctx.Err() != nil:
			return fmt.Errorf("approval of tool %s: %w", req.Tool, ctx.Err())
		case ans.err != nil && actx.Err() != nil:
			return p.timedOut(req)
		case ans.err != nil:
			return &PermissionError{Tool: req.Tool, Stage: StageApprover, Reason: "approver failed: " + ans.err.Error()}
		}
		return verdict(req, ans.a)
	case <-actx.Done():
		select {
		case ans := <-done: // an answer given as the wait ended still counts
			if ans.err == nil {
				return verdict(req, ans.a)
			}
		default:
		}
		if ctx.Err() != nil {
			return fmt.Errorf("approval of tool %s: %w", req.Tool, ctx.Err())
		}
		return p.timedOut(req)
	}
}

// verdict turns an approver's answer into Check's result.
func verdict(req Request, a Approval) error {
	if a.Allow {
		return nil
	}
	return &PermissionError{Tool: req.Tool, Stage: StageApprover, Reason: cmp.Or(a.Reason, "the approver refused")}
}

func (p *Permissions) timedOut(req Request) error {
	return &PermissionError{Tool: req.Tool, Stage: StageApprover, Reason: fmt.Sprintf("approval expired: no answer within %v", p.timeout)}
}

// Rule matches a tool name (a glob: "read_file", "mcp__fs__*") and,
// optionally, an argument pattern matched against the call's subjects (see
// RuleSubjecter and MultiRuleSubjecter): "bash(git *)", "write_file(docs/**)".
//
// Patterns are globs: "?" matches one character, "*" a run of characters
// and "**" any run including '/'; "**/" also matches nothing, so
// "docs/**/*.md" matches "docs/a.md". In allow rules "*" and "?" do not cross
// '/', so "write_file(docs/*)" does not allow "docs/sub/x". In deny rules they
// do, so "bash(rm *)" denies "rm -rf /tmp/x": a deny rule errs on the side of
// matching. A pattern that ends in " *" (or " **") also matches what comes
// before it alone, so "bash(rm *)" matches the command "rm" without
// arguments, and "bash(ls *)" allows "ls".
type Rule struct {
	tool    string
	pattern string // "" when the rule has no argument pattern
	hasArg  bool

	toolRE  *regexp.Regexp
	narrow  *regexp.Regexp // '*' stops at '/'
	broad   *regexp.Regexp // '*' crosses '/'
	display string
}

// ParseRule parses "tool" or "tool(pattern)".
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		return Rule{}, fmt.Errorf("rule %q: not valid UTF-8", s)
	}
	name, pattern, hasArg := s, "", false
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return Rule{}, fmt.Errorf("rule %q: missing closing parenthesis", s)
		}
		name, pattern, hasArg = s[:i], s[i+1:len(s)-1], true
		if pattern == "" {
			return Rule{}, fmt.Errorf("rule %q: empty argument pattern (write %q to match every call)", s, name)
		}
	}
	if name == "" {
		return Rule{}, fmt.Errorf("rule %q: empty tool name", s)
	}
	for _, c := range name {
		if !(c == '*' || c == '?' || c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return Rule{}, fmt.Errorf("rule %q: invalid character %q in tool name", s, c)
		}
	}
	r := Rule{tool: name, pattern: pattern, hasArg: hasArg, display: s}
	var err error
	if r.toolRE, err = regexp.Compile(globRegexp(name, false)); err != nil {
		return Rule{}, fmt.Errorf("rule %q: %w", s, err)
	}
	if hasArg {
		globs := []string{pattern}
		if bare, ok := bareCommand(pattern); ok {
			globs = append(globs, bare)
		}
		if r.narrow, err = regexp.Compile(globsRegexp(globs, true)); err != nil {
			return Rule{}, fmt.Errorf("rule %q: %w", s, err)
		}
		if r.broad, err = regexp.Compile(globsRegexp(globs, false)); err != nil {
			return Rule{}, fmt.Errorf("rule %q: %w", s, err)
		}
	}
	return r, nil
}

// String returns the rule as written.
func (r Rule) String() string { return r.display }

// Tool returns the rule's tool-name glob.
func (r Rule) Tool() string { return r.tool }

// Pattern returns the rule's argument pattern and whether it has one.
func (r Rule) Pattern() (string, bool) { return r.pattern, r.hasArg }

func (r Rule) matchAllow(tool, subject string) bool {
	return r.toolRE != nil && r.toolRE.MatchString(tool) && (!r.hasArg || r.narrow.MatchString(subject))
}

func (r Rule) matchDeny(tool, subject string) bool {
	return r.toolRE != nil && r.toolRE.MatchString(tool) && (!r.hasArg || r.broad.MatchString(subject))
}

// denies reports whether the deny rule r matches req's Subject or any of
// its parts.
func (r Rule) denies(req Request) bool {
	if r.matchDeny(req.Tool, req.Subject) {
		return true
	}
	return r.hasArg && slices.ContainsFunc(req.Subjects.Parts, func(s string) bool { return r.matchDeny(req.Tool, s) })
}

// MatchGlob reports whether name matches the glob pattern, where '*' and '?'
// match any characters including '/'. It is how views and rules match tool
// names.
func MatchGlob(pattern, name string) bool {
	re, err := regexp.Compile(globRegexp(pattern, false))
	return err == nil && re.MatchString(name)
}

// bareCommand returns what a pattern ending in " *" (or " **") matches
// without its arguments: "rm" for "rm *".
func bareCommand(pattern string) (string, bool) {
	trimmed := strings.TrimRight(pattern, "*")
	bare, ok := strings.CutSuffix(trimmed, " ")
	return bare, ok && trimmed != pattern && bare != ""
}

// globsRegexp translates globs into an anchored regular expression that
// matches what any of them matches (see globRegexp).
func globsRegexp(globs []string, pathSep bool) string {
	bodies := make([]string, len(globs))
	for i, g := range globs {
		bodies[i] = globBody(g, pathSep)
	}
	return `(?s)\A(?:` + strings.Join(bodies, "|") + `)\z`
}

// globRegexp translates a glob into an anchored regular expression that
// also matches across newlines. With pathSep, '*' and '?' do not match '/'.
func globRegexp(glob string, pathSep bool) string {
	return `(?s)\A` + globBody(glob, pathSep) + `\z`
}

// globBody is the unanchored regular expression of a glob.
func globBody(glob string, pathSep bool) string {
	var sb strings.Builder
	star, one := `.*`, `.`
	if pathSep {
		star, one = `[^/]*`, `[^/]`
	}
	for i := 0; i < len(glob); i++ {
		switch glob[i] {
		case '*':
			if i+1 < len(glob) && glob[i+1] == '*' {
				i++
				if i+1 < len(glob) && glob[i+1] == '/' {
					i++
					sb.WriteString(`(?:.*/)?`)
				} else {
					sb.WriteString(`.*`)
				}
				continue
			}
			sb.WriteString(star)
		case '?':
			sb.WriteString(one)
		default:
			sb.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	return sb.String()
}
