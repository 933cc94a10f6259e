package scripted

import (
	"fmt"
	"regexp"

	"github.com/agcore/agcore/messages"
)

// ScriptError says which part of a script is wrong and why.
type ScriptError struct {
	// Rule is the index of the offending rule, or -1 when the problem is
	// not in a rule.
	Rule int
	// Field is the path of the offending field, as in
	// "rules[2].turns[0].tool_calls[1].name".
	Field string
	// Err is the problem.
	Err error
}

// Error implements error, as in "scripted: rules[2].match.regexp: ...".
func (e *ScriptError) Error() string {
	return fmt.Sprintf("scripted: %s: %v", e.Field, e.Err)
}

// Unwrap returns the problem.
func (e *ScriptError) Unwrap() error { return e.Err }

func ruleErr(i int, field string, format string, args ...any) *ScriptError {
	return &ScriptError{Rule: i, Field: fmt.Sprintf("rules[%d]%s", i, field), Err: fmt.Errorf(format, args...)}
}

// Validate checks s and returns a *ScriptError naming the first problem.
func (s Script) Validate() error {
	_, err := compile(s)
	return err
}

// compile validates s and returns its rules' regular expressions (nil where
// a rule has none).
func compile(s Script) ([]*regexp.Regexp, error) {
	if len(s.Rules) == 0 {
		return nil, &ScriptError{Rule: -1, Field: "rules", Err: fmt.Errorf("the script has no rules")}
	}
	res := make([]*regexp.Regexp, len(s.Rules))
	for i, r := range s.Rules {
		re, err := validateRule(i, r, s.Stateless)
		if err != nil {
			return nil, err
		}
		res[i] = re
	}
	for j, inj := range s.Failures {
		field := fmt.Sprintf("failures[%d]", j)
		if s.Stateless {
			return nil, &ScriptError{Rule: -1, Field: field, Err: fmt.Errorf("call-numbered failures need a stateful script")}
		}
		if len(inj.Calls) == 0 {
			return nil, &ScriptError{Rule: -1, Field: field + ".calls", Err: fmt.Errorf("no call numbers")}
		}
		for k, n := range inj.Calls {
			if n < 1 {
				return nil, &ScriptError{Rule: -1, Field: fmt.Sprintf("%s.calls[%d]", field, k), Err: fmt.Errorf("call numbers start at 1, got %d", n)}
			}
		}
		if err := validateFailure(inj.Failure); err != nil {
			return nil, &ScriptError{Rule: -1, Field: field + ".fail" + err.field, Err: err.err}
		}
	}
	return res, nil
}

func validateRule(i int, r Rule, stateless bool) (*regexp.Regexp, error) {
	m := r.Match
	switch {
	case m.Any && (m.Role != "" || m.Exact != "" || m.Contains != "" || m.Regexp != "" || m.Tool != ""):
		return nil, ruleErr(i, ".match.any", "any excludes the other conditions")
	case !m.Any && m.Role == "" && m.Exact == "" && m.Contains == "" && m.Regexp == "" && m.Tool == "":
		return nil, ruleErr(i, ".match", "no condition (set any to match every message)")
	case m.Role != "" && m.Role != messages.RoleUser && m.Role != messages.RoleTool:
		return nil, ruleErr(i, ".match.role", "must be user or tool, got %q", m.Role)
	case m.Tool != "" && m.Role == messages.RoleUser:
		return nil, ruleErr(i, ".match.tool", "a tool condition cannot match user messages")
	}
	var re *regexp.Regexp
	if m.Regexp != "" {
		var err error
		if re, err = regexp.Compile(m.Regexp); err != nil {
			return nil, ruleErr(i, ".match.regexp", "%w", err)
		}
	}
	switch {
	case r.Once && len(r.Turns) > 0:
		return nil, ruleErr(i, ".once", "once and turns are exclusive (turns already end)")
	case r.Once && stateless:
		return nil, ruleErr(i, ".once", "once needs a stateful script")
	}
	if len(r.Turns) == 0 {
		if err := validateReply(r.Reply); err != nil {
			return nil, ruleErr(i, ".reply"+err.field, "%w", err.err)
		}
		return re, nil
	}
	if !r.Reply.isZero() {
		return nil, ruleErr(i, ".reply", "reply and turns are exclusive")
	}
	for k, rep := range r.Turns {
		if err := validateReply(rep); err != nil {
			return nil, ruleErr(i, fmt.Sprintf(".turns[%d]%s", k, err.field), "%w", err.err)
		}
	}
	return re, nil
}

// fieldErr is a problem at a field path relative to its parent.
type fieldErr struct {
	field string
	err   error
}

func validateReply(r Reply) *fieldErr {
	if r.Fail != nil {
		if err := validateFailure(*r.Fail); err != nil {
			return &fieldErr{".fail" + err.field, err.err}
		}
	} else if r.Text == "" && len(r.ToolCalls) == 0 {
		return &fieldErr{"", fmt.Errorf("a reply needs text, tool calls or a failure")}
	}
	for k, c := range r.ToolCalls {
		if c.Name == "" {
			return &fieldErr{fmt.Sprintf(".tool_calls[%d].name", k), fmt.Errorf("missing")}
		}
	}
	switch {
	case r.Latency < 0:
		return &fieldErr{".latency", fmt.Errorf("negative duration %v", r.Latency)}
	case r.ChunkDelay < 0:
		return &fieldErr{".chunk_delay", fmt.Errorf("negative duration %v", r.ChunkDelay)}
	}
	if r.Usage != nil && (r.Usage.PromptTokens < 0 || r.Usage.CompletionTokens < 0 || r.Usage.TotalTokens < 0) {
		return &fieldErr{".usage", fmt.Errorf("negative token count")}
	}
	return nil
}

func validateFailure(f Failure) *fieldErr {
	if !f.Kind.valid() {
		return &fieldErr{".kind", fmt.Errorf("unknown failure kind %q (want rate_limit, server, timeout, context_length, auth, not_found or bad_request)", f.Kind)}
	}
	switch {
	case f.RetryAfter < 0:
		return &fieldErr{".retry_after", fmt.Errorf("negative duration %v", f.RetryAfter)}
	case f.RetryAfter > 0 && f.Kind != FailRateLimit:
		return &fieldErr{".retry_after", fmt.Errorf("only a rate_limit failure has a retry_after")}
	case f.AfterChunks < 0:
		return &fieldErr{".after_chunks", fmt.Errorf("negative count %d", f.AfterChunks)}
	}
	return nil
}

func (r Reply) isZero() bool {
	return r.Text == "" && len(r.ToolCalls) == 0 && r.FinishReason == "" && r.Usage == nil &&
		r.Latency == 0 && r.ChunkDelay == 0 && r.Fail == nil
}
