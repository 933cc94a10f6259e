package scripted

import (
	"time"

	"github.com/agcore/agcore/messages"
)

// Script is the behaviour of a scripted model: an ordered list of rules.
// For each request the provider takes the last user or tool message and
// answers with the first rule that matches it and is not exhausted.
//
// A Script is plain data. Build it in Go, or load it with ParseJSON,
// ParseYAML or LoadFile. New validates it.
type Script struct {
	// Rules are tried in order.
	Rules []Rule
	// Stateless makes every reply a function of the request alone, so that
	// concurrent conversations sharing one provider (or one mock server)
	// get reproducible replies whatever their interleaving. In stateless
	// mode Once and Injection call numbers are refused, and Turns are
	// indexed by the step of the conversation (see Rule.Turns) instead of
	// by the number of times the rule was played. The default (false) is
	// stateful: Once rules are consumed and Turns play in call order.
	Stateless bool
	// Failures inject errors into given calls of the provider, counted over
	// all calls whatever rule matches. Refused in stateless mode.
	Failures []Injection
}

// Rule is one behaviour: when Match holds, answer with Reply, or with the
// next of Turns.
type Rule struct {
	// Name labels the rule in errors and logs. Optional.
	Name string
	// Match selects the requests this rule answers.
	Match Match
	// Reply is the answer, used when Turns is empty.
	Reply Reply
	// Turns, when not empty, are replies played in order. In stateful mode
	// the k-th time the rule answers it plays Turns[k-1]; after the last
	// one the rule is exhausted and later rules are tried. In stateless
	// mode it plays Turns[s], where s is the number of assistant messages
	// after the last user message of the request (0 for the first reply
	// to a user message, 1 after the first tool round trip, ...); past the
	// end the rule does not match.
	Turns []Reply
	// Once makes the rule answer a single time, then be skipped. Exclusive
	// with Turns; refused in stateless mode. The default is to repeat.
	Once bool
}

// Match is the condition of a rule, tested on the last user or tool message
// of a request. All the conditions that are set must hold. A Match with no
// condition at all is invalid: use Any to match everything.
type Match struct {
	// Any matches every message. Exclusive with the other conditions.
	Any bool
	// Role restricts the match to messages.RoleUser or messages.RoleTool.
	// Empty accepts both.
	Role messages.Role
	// Exact requires the message text to equal this string.
	Exact string
	// Contains requires the message text to contain this string.
	Contains string
	// Regexp requires the message text to match this regular expression
	// (RE2 syntax, unanchored).
	Regexp string
	// Tool requires a tool message that answers a call of the tool with
	// this name. It implies Role tool.
	Tool string
}

// Reply is what the model answers: text, tool calls or both, or a failure.
type Reply struct {
	// Text is the assistant text.
	Text string
	// ToolCalls are the calls the assistant asks for, in order.
	ToolCalls []ToolCall
	// FinishReason overrides the derived reason, which is
	// messages.FinishToolCalls when there are tool calls and
	// messages.FinishStop otherwise.
	FinishReason messages.FinishReason
	// Usage is reported as given. Nil estimates it at about four
	// characters per token (see EstimateTokens).
	Usage *messages.Usage
	// Latency is waited before the reply (before Stream returns), through
	// Options.Sleep, so that tests need not wait for real.
	Latency time.Duration
	// ChunkDelay is waited before every streamed chunk after the first.
	ChunkDelay time.Duration
	// Fail, when set, makes this reply an error instead.
	Fail *Failure
}

// ToolCall is a tool call of a reply.
type ToolCall struct {
	// ID is the call id. Empty generates "call_<a>_<i>", where a is one
	// plus the number of assistant messages in the request and i the
	// 1-based position of the call in the reply: deterministic, and unique
	// within a conversation.
	ID string
	// Name is the tool name. Required.
	Name string
	// Arguments is the argument JSON text, sent as written (it is not
	// validated, so that scripts can send malformed arguments on purpose).
	Arguments string
}

// FailureKind is the class of an injected failure. Each maps onto a
// providers.Kind.
type FailureKind string

// The failure kinds.
const (
	// FailRateLimit is a 429 with an optional Retry-After.
	FailRateLimit FailureKind = "rate_limit"
	// FailServer is a 500.
	FailServer FailureKind = "server"
	// FailTimeout is a request that timed out.
	FailTimeout FailureKind = "timeout"
	// FailContextLength is a 400 context_length_exceeded.
	FailContextLength FailureKind = "context_length"
	// FailAuth is a 401.
	FailAuth FailureKind = "auth"
	// FailNotFound is a 404 (unknown model).
	FailNotFound FailureKind = "not_found"
	// FailBadRequest is a 400.
	FailBadRequest FailureKind = "bad_request"
)

// Failure is an injected error, returned as a *providers.Error.
type Failure struct {
	// Kind is the class of the error. Required.
	Kind FailureKind
	// RetryAfter is the server's requested wait, for FailRateLimit.
	RetryAfter time.Duration
	// Message is the error text; empty uses a standard text for the kind.
	Message string
	// AfterChunks makes a stream fail after sending this many chunks of
	// the reply (its text, tool calls, finish and usage; at most all of
	// them) instead of failing at once. Chat fails at once regardless.
	AfterChunks int
}

// Injection fails given calls of the provider, whatever rule matches.
type Injection struct {
	// Calls are the 1-based numbers of the calls that fail, counted over
	// all Chat and Stream calls of the provider.
	Calls []int
	// Failure is the error returned.
	Failure Failure
}
