package messages

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventMeta is carried by every stream event: the session and the 0-based
// turn index it belongs to.
type EventMeta struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
}

// Meta returns the event's metadata.
func (m EventMeta) Meta() EventMeta { return m }

// Event is something a running session publishes to its subscribers. The set
// of events is closed: TurnStarted, TextDelta, ToolStarted, ToolFinished,
// UsageReported, ContextCompacted, TurnEnded, ErrorEvent, AgentChanged,
// SubAgentStarted, SubAgentEnded, ApprovalPending, ToolProgress,
// ElicitationPending and ElicitationAnswered.
type Event interface {
	// EventType is the event's tag in its JSON form ("text_delta", ...).
	EventType() string
	// Meta returns the session and turn the event belongs to.
	Meta() EventMeta
	isEvent()
}

// TurnStarted opens a turn.
type TurnStarted struct {
	EventMeta
	// TurnID is the client's id of the submission (for idempotent retries).
	TurnID string `json:"turn_id,omitempty"`
	Agent  string `json:"agent,omitempty"`
}

// TextDelta is a piece of assistant text as it streams.
type TextDelta struct {
	EventMeta
	Text string `json:"text"`
}

// ToolStarted says a tool call has begun.
type ToolStarted struct {
	EventMeta
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
	// Source says where the tool comes from: builtin, wasm, mcp, runtime
	// or schedule (toolsys.Source).
	Source string `json:"source,omitempty"`
}

// ToolFinished says a tool call has ended, successfully or not.
type ToolFinished struct {
	EventMeta
	CallID   string        `json:"call_id"`
	Name     string        `json:"name"`
	Duration time.Duration `json:"duration_ns"`
	IsError  bool          `json:"is_error,omitempty"`
	// Content is the result text the model will read (capped).
	Content string `json:"content,omitempty"`
	// Source says where the tool comes from, as in ToolStarted.
	Source string `json:"source,omitempty"`
}

// ToolProgress reports how far a tool call in flight has got, as its tool
// said (an MCP server's progress notifications). It comes between the
// call's ToolStarted and ToolFinished, and is not journaled.
type ToolProgress struct {
	EventMeta
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Progress is how far the call is; it grows with each report.
	Progress float64 `json:"progress"`
	// Total is the amount of work when the tool knows it; zero means unknown.
	Total float64 `json:"total,omitempty"`
	// Message says what the tool is doing, when it says.
	Message string `json:"message,omitempty"`
}

// UsageReported carries the usage and cost of one model call, and the
// session's running totals.
type UsageReported struct {
	EventMeta
	Model        string  `json:"model,omitempty"`
	Usage        Usage   `json:"usage"`
	Cost         float64 `json:"cost,omitempty"`
	SessionUsage Usage   `json:"session_usage"`
	SessionCost  float64 `json:"session_cost,omitempty"`
}

// ContextCompacted says the session's history was compacted.
type ContextCompacted struct {
	EventMeta
	// Kind is "micro" (old tool results pruned) or "summary".
	Kind         string `json:"kind"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
}

// TurnOutcome says how a turn ended.
type TurnOutcome string

// The turn outcomes.
const (
	OutcomeCompleted TurnOutcome = "completed"
	OutcomeCancelled TurnOutcome = "cancelled"
	OutcomeFailed    TurnOutcome = "failed"
	// OutcomeLimit means a limit (round trips, tokens, cost) stopped the turn.
	OutcomeLimit TurnOutcome = "limit"
)

// TurnEnded closes a turn. It is the last event of a turn's stream.
type TurnEnded struct {
	EventMeta
	TurnID       string       `json:"turn_id,omitempty"`
	Outcome      TurnOutcome  `json:"outcome"`
	FinishReason FinishReason `json:"finish_reason,omitempty"`
	// Text is the final assistant text.
	Text string `json:"text,omitempty"`
	// Reason explains an outcome other than completed.
	Reason     string  `json:"reason,omitempty"`
	Usage      Usage   `json:"usage"`
	Cost       float64 `json:"cost,omitempty"`
	RoundTrips int     `json:"round_trips"`
	// Output is the turn's structured answer (see OutputSpec).
	Output json.RawMessage `json:"output,omitempty"`
	// OutputFailure says why a turn that had to end with a structured
	// answer failed without one.
	OutputFailure *OutputFailure `json:"output_failure,omitempty"`
}

// ErrorEvent reports an error during a turn. A fatal error is followed by
// TurnEnded with OutcomeFailed.
type ErrorEvent struct {
	EventMeta
	Message string `json:"message"`
	// Kind classifies the error ("rate_limited", "tool", "provider", ...).
	Kind string `json:"kind,omitempty"`
}

// AgentChanged says the session's active agent profile changed.
type AgentChanged struct {
	EventMeta
	From string `json:"from"`
	To   string `json:"to"`
}

// SubAgentStarted says a sub-agent was spawned by a tool call.
type SubAgentStarted struct {
	EventMeta
	CallID string `json:"call_id"`
	Child  string `json:"child"`
	Agent  string `json:"agent,omitempty"`
	Depth  int    `json:"depth"`
}

// SubAgentEnded says a sub-agent finished; Usage and Cost cover its subtree.
type SubAgentEnded struct {
	EventMeta
	CallID  string      `json:"call_id"`
	Child   string      `json:"child"`
	Outcome TurnOutcome `json:"outcome"`
	Usage   Usage       `json:"usage"`
	Cost    float64     `json:"cost,omitempty"`
}

// ApprovalPending says a tool call waits for a human (or policy) decision.
type ApprovalPending struct {
	EventMeta
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	Reason string `json:"reason,omitempty"`
}

// ElicitationPending says an MCP server asks the session's user a
// question (elicitation/create) during tool call CallID. The answer is
// given through Runtime.AnswerElicitation, with ID.
type ElicitationPending struct {
	EventMeta
	ID     string `json:"id"`
	Server string `json:"server"`
	// CallID is the tool call the question belongs to, when that can be
	// told.
	CallID  string `json:"call_id,omitempty"`
	Message string `json:"message"`
	// Mode is "form" (answer Fields) or "url" (open URL).
	Mode string `json:"mode"`
	// Fields are the names of the form's fields, sorted.
	Fields []string `json:"fields,omitempty"`
	URL    string   `json:"url,omitempty"`
	// Expires is when the question is cancelled if no one answers.
	Expires time.Time `json:"expires,omitzero"`
}

// ElicitationAnswered says a question of ElicitationPending was answered
// (accept, decline or cancel), or expired (cancel, By "runtime").
type ElicitationAnswered struct {
	EventMeta
	ID     string `json:"id"`
	Action string `json:"action"`
	By     string `json:"by,omitempty"`
}

// EventType implements Event.
func (TurnStarted) EventType() string { return "turn_started" }

// EventType implements Event.
func (TextDelta) EventType() string { return "text_delta" }

// EventType implements Event.
func (ToolStarted) EventType() string { return "tool_started" }

// EventType implements Event.
func (ToolFinished) EventType() string { return "tool_finished" }

// EventType implements Event.
func (UsageReported) EventType() string { return "usage" }

// EventType implements Event.
func (ContextCompacted) EventType() string { return "compacted" }

// EventType implements Event.
func (TurnEnded) EventType() string { return "turn_ended" }

// EventType implements Event.
func (ErrorEvent) EventType() string { return "error" }

// EventType implements Event.
func (AgentChanged) EventType() string { return "agent_changed" }

// EventType implements Event.
func (SubAgentStarted) EventType() string { return "subagent_started" }

// EventType implements Event.
func (SubAgentEnded) EventType() string { return "subagent_ended" }

// EventType implements Event.
func (ApprovalPending) EventType() string { return "approval_pending" }

// EventType implements Event.
func (ToolProgress) EventType() string { return "tool_progress" }

// EventType implements Event.
func (ElicitationPending) EventType() string { return "elicitation_pending" }

// EventType implements Event.
func (ElicitationAnswered) EventType() string { return "elicitation_answered" }

func (TurnStarted) isEvent()         {}
func (TextDelta) isEvent()           {}
func (ToolStarted) isEvent()         {}
func (ToolFinished) isEvent()        {}
func (UsageReported) isEvent()       {}
func (ContextCompacted) isEvent()    {}
func (TurnEnded) isEvent()           {}
func (ErrorEvent) isEvent()          {}
func (AgentChanged) isEvent()        {}
func (SubAgentStarted) isEvent()     {}
func (SubAgentEnded) isEvent()       {}
func (ApprovalPending) isEvent()     {}
func (ToolProgress) isEvent()        {}
func (ElicitationPending) isEvent()  {}
func (ElicitationAnswered) isEvent() {}

func newEvent(typ string) Event {
	switch typ {
	case "turn_started":
		return &TurnStarted{}
	case "text_delta":
		return &TextDelta{}
	case "tool_started":
		return &ToolStarted{}
	case "tool_finished":
		return &ToolFinished{}
	case "usage":
		return &UsageReported{}
	case "compacted":
		return &ContextCompacted{}
	case "turn_ended":
		return &TurnEnded{}
	case "error":
		return &ErrorEvent{}
	case "agent_changed":
		return &AgentChanged{}
	case "subagent_started":
		return &SubAgentStarted{}
	case "subagent_ended":
		return &SubAgentEnded{}
	case "approval_pending":
		return &ApprovalPending{}
	case "tool_progress":
		return &ToolProgress{}
	case "elicitation_pending":
		return &ElicitationPending{}
	case "elicitation_answered":
		return &ElicitationAnswered{}
	}
	return nil
}

type taggedEvent struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// MarshalEvent encodes e as {"type": ..., "data": {...}}.
func MarshalEvent(e Event) ([]byte, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("marshal event %s: %w", e.EventType(), err)
	}
	return json.Marshal(taggedEvent{Type: e.EventType(), Data: data})
}

// UnmarshalEvent decodes what MarshalEvent produced. The returned Event is a
// value (TextDelta, not *TextDelta).
func UnmarshalEvent(b []byte) (Event, error) {
	var t taggedEvent
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("unmarshal event: %w", err)
	}
	ptr := newEvent(t.Type)
	if ptr == nil {
		return nil, fmt.Errorf("unmarshal event: unknown type %q", t.Type)
	}
	if err := json.Unmarshal(t.Data, ptr); err != nil {
		return nil, fmt.Errorf("unmarshal event %s: %w", t.Type, err)
	}
	return deref(ptr).(Event), nil
}
