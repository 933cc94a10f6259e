package toolsys

import "encoding/json"

// Subjects are the parts of one call that the argument patterns of
// permission rules are matched against, when a single subject would hide
// what the call does: a shell script is several commands, and an allow rule
// for one of them must not allow the others.
//
// A deny rule refuses the call if it matches any part (or the call's whole
// Subject), and a deny rule with an argument pattern also refuses a call
// that is Unresolved. An allow rule with an argument pattern allows the call
// only if every part is matched by some allow rule and the call is neither
// Opaque nor Unresolved.
//
// Rules matched against Subjects are a guard-rail against the honest
// mistakes of a model, not a security boundary: a tool that runs programs
// is contained by the confinement it runs in (for bash, the kernel's), not
// by what its arguments look like.
type Subjects struct {
	// Parts are the subjects, one per unit the tool can vouch for (for a
	// shell script, each command it runs, resolved to the program's name and
	// its arguments after quote removal, and each wrapper around one). Empty
	// means the call's Subject alone.
	Parts []string
	// Opaque, when not empty, says what the call holds beyond Parts that
	// could not be analysed ("a redirection to a file", "python3 runs
	// program text given inline"). Allow rules with an argument pattern
	// never allow such a call, which goes on to the approver; deny rules
	// still apply to Parts and Subject.
	Opaque string
	// Unresolved, when not empty, says why the call may run a command whose
	// name cannot be known before it runs ("the command name $a is only
	// known when the script runs", "bash reads its script from a pipe").
	// It implies Opaque. A deny rule with an argument pattern on the tool
	// refuses such a call, since nothing shows that the command is not the
	// one the rule denies: the call fails closed.
	Unresolved string
}

// MultiRuleSubjecter is implemented by a Tool whose calls may hold several
// subjects, such as a shell tool running a script of several commands. The
// registry asks it in addition to RuleSubjecter, which still gives the
// whole Subject that hooks and approvers read. tc may be nil.
type MultiRuleSubjecter interface {
	RuleSubjects(args json.RawMessage, tc *Context) Subjects
}

// TypedMultiRuleSubjecter is the typed form of MultiRuleSubjecter: a Typed[P]
// that implements it is asked with its decoded parameters. If the arguments
// do not decode, the whole Subject alone is used (the call will then fail
// validation and never run).
type TypedMultiRuleSubjecter[P any] interface {
	RuleSubjects(params P, tc *Context) Subjects
}

// subjectOf returns what rule patterns are matched against for a call: the
// whole subject (RuleSubjecter, else the compact JSON arguments) and its
// parts (MultiRuleSubjecter, else none).
func subjectOf(t Tool, args json.RawMessage, tc *Context) (string, Subjects) {
	subject := ""
	if rs, ok := t.(RuleSubjecter); ok {
		subject = rs.RuleSubject(args, tc)
	} else {
		subject = compactArgs(args)
	}
	var parts Subjects
	if ms, ok := t.(MultiRuleSubjecter); ok {
		parts = ms.RuleSubjects(args, tc)
	}
	return subject, parts
}
