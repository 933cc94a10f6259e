package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"
)

// EnvelopeVersion is the journal envelope version this package writes.
// Version 2 added the checksum of the stored entry (see Envelope.Encode);
// version 1 envelopes, which have none, are still read.
const EnvelopeVersion = 2

// Errors returned by Envelope.Decode and DecodeEnvelope, wrapped in a
// *DecodeError.
var (
	ErrUnknownVersion = errors.New("unknown envelope version")
	ErrUnknownType    = errors.New("unknown journal event type")
	ErrCorrupt        = errors.New("corrupt journal entry")
	// ErrChecksum says that a stored envelope does not match its checksum,
	// or that a version 2 envelope has none. It comes wrapped together with
	// ErrCorrupt.
	ErrChecksum = errors.New("checksum mismatch")
)

// Envelope is one journal event with its header. Encode gives its stored
// form and DecodeEnvelope reads it back.
type Envelope struct {
	V    int             `json:"v"`
	Seq  uint64          `json:"seq"`
	Type string          `json:"type"`
	At   time.Time       `json:"at"`
	Data json.RawMessage `json:"data"`
}

// DecodeError says which journal entry could not be decoded and why. Err is
// one of ErrUnknownVersion, ErrUnknownType or ErrCorrupt, possibly wrapping
// the decoder's error.
type DecodeError struct {
	Seq  uint64
	Type string
	Err  error
}

// Error implements error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("journal entry seq %d (type %q): %v", e.Seq, e.Type, e.Err)
}

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// JournalEvent is a fact a session records in its journal. The set is closed:
// Activated, UserMessage, AssistantMessage, ToolCallStarted, ToolResult,
// TurnCompleted, TurnCancelled, Compacted, ApprovalRequested,
// ApprovalGranted, ApprovalDenied, AgentSwitched, SubAgentSpawned,
// SubAgentFinished, ElicitationRequested, ElicitationResolved and
// SamplingAnswered.
type JournalEvent interface {
	// JournalType is the event's tag in the envelope ("user_message", ...).
	JournalType() string
	isJournalEvent()
}

// Activated is appended each time a session is activated (opened, restarted,
// resumed); a writer whose activation has been superseded is fenced off.
type Activated struct {
	Activation uint64 `json:"activation"`
	Node       string `json:"node,omitempty"`
}

// UserMessage is a user's input, journaled before the turn is acknowledged.
type UserMessage struct {
	// TurnID is the client's id of the submission; a retried submission with
	// the same id is recognised and not run twice.
	TurnID  string  `json:"turn_id,omitempty"`
	Turn    int     `json:"turn"`
	Message Message `json:"message"`
	// TraceID and SpanID name the turn's span, in the hex form of
	// OpenTelemetry, when the runtime traces; both are empty otherwise.
	// Readers that predate them ignore them, so the envelope version is
	// unchanged.
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
	// Output is the structured answer the turn must end with; nil for a
	// plain turn. A later UserMessage of the same turn (an answer sent
	// back to the model with its problem) has none.
	Output *OutputSpec `json:"output,omitempty"`
}

// AssistantMessage is a model reply.
type AssistantMessage struct {
	Turn         int          `json:"turn"`
	Message      Message      `json:"message"`
	FinishReason FinishReason `json:"finish_reason,omitempty"`
	Model        string       `json:"model,omitempty"`
	Usage        Usage        `json:"usage"`
	Cost         float64      `json:"cost,omitempty"`
}

// ToolCallStarted is journaled before a tool runs. Arguments are stored as
// the model wrote them: secret placeholders, never secret values.
type ToolCallStarted struct {
	Turn      int    `json:"turn"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolResult is the outcome of a tool call, as the model will read it.
type ToolResult struct {
	Turn     int            `json:"turn"`
	CallID   string         `json:"call_id"`
	Name     string         `json:"name"`
	Content  string         `json:"content"`
	IsError  bool           `json:"is_error,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Duration time.Duration  `json:"duration_ns,omitempty"`
}

// TurnCompleted closes a turn that ran to its end (or to a limit).
type TurnCompleted struct {
	Turn         int          `json:"turn"`
	TurnID       string       `json:"turn_id,omitempty"`
	Outcome      TurnOutcome  `json:"outcome"`
	FinishReason FinishReason `json:"finish_reason,omitempty"`
	Reason       string       `json:"reason,omitempty"`
	Usage        Usage        `json:"usage"`
	Cost         float64      `json:"cost,omitempty"`
	RoundTrips   int          `json:"round_trips"`
	// Output is the turn's structured answer, checked against its
	// OutputSpec, as compact JSON.
	Output json.RawMessage `json:"output,omitempty"`
	// OutputFailure says why a turn that had to end with a structured
	// answer failed without one.
	OutputFailure *OutputFailure `json:"output_failure,omitempty"`
}

// TurnCancelled closes a turn that was cancelled.
type TurnCancelled struct {
	Turn   int    `json:"turn"`
	TurnID string `json:"turn_id,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Compacted replaces the conversation history up to and including the entry
// Through with Messages (a summary and/or pruned messages).
type Compacted struct {
	// Kind is "micro" or "summary".
	Kind         string    `json:"kind"`
	Through      uint64    `json:"through"`
	Messages     []Message `json:"messages"`
	TokensBefore int       `json:"tokens_before"`
	TokensAfter  int       `json:"tokens_after"`
}

// ApprovalRequested says a tool call waits for approval.
type ApprovalRequested struct {
	Turn   int    `json:"turn"`
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	Reason string `json:"reason,omitempty"`
}

// ElicitationRequested says an MCP server asked the session's user a
// question during tool call CallID of turn Turn. The answer is journaled
// as ElicitationResolved.
type ElicitationRequested struct {
	Turn    int    `json:"turn"`
	ID      string `json:"id"`
	Server  string `json:"server"`
	CallID  string `json:"call_id,omitempty"`
	Message string `json:"message"`
	Mode    string `json:"mode"`
	// Fields are the names of the form's fields, sorted.
	Fields []string `json:"fields,omitempty"`
	URL    string   `json:"url,omitempty"`
}

// ElicitationResolved records how a question of ElicitationRequested
// ended: accept, decline or cancel, by whom, and the names of the fields an
// accepted answer gave. The values given are never journaled: a server may
// ask for a credential, and its schema cannot say which fields hold one.
type ElicitationResolved struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	By     string `json:"by,omitempty"`
	// Fields are the names of the fields the answer gave, sorted.
	Fields []string `json:"fields,omitempty"`
	// Reason says why the runtime cancelled the question (it expired, the
	// turn ended).
	Reason string `json:"reason,omitempty"`
}

// SamplingAnswered records an MCP server's sampling request that the
// session's model answered during tool call CallID of turn Turn, once the
// session's approval path allowed it: a summary of the request, the
// model's answer, and what it spent, counted in the session's usage and
// cost.
type SamplingAnswered struct {
	Turn   int    `json:"turn"`
	Server string `json:"server"`
	CallID string `json:"call_id,omitempty"`
	// Request summarises the request: how many messages, the token limit
	// and the start of the last message.
	Request string  `json:"request"`
	Text    string  `json:"text"`
	Model   string  `json:"model"`
	Usage   Usage   `json:"usage"`
	Cost    float64 `json:"cost,omitempty"`
}

// ApprovalGranted says a pending tool call was approved.
type ApprovalGranted struct {
	CallID string `json:"call_id"`
	By     string `json:"by,omitempty"`
}

// ApprovalDenied says a pending tool call was denied (or timed out).
type ApprovalDenied struct {
	CallID string `json:"call_id"`
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// AgentSwitched says the session's active agent profile changed; Note is
// what the new agent is told.
type AgentSwitched struct {
	From string `json:"from"`
	To   string `json:"to"`
	Note string `json:"note,omitempty"`
}

// SubAgentSpawned says a session spawned a sub-agent session: a tool call
// of turn Turn, or, when Turn is negative, the session itself outside its
// turns (a plan step of a task agent).
type SubAgentSpawned struct {
	Turn   int    `json:"turn"`
	CallID string `json:"call_id"`
	Child  string `json:"child"`
	Agent  string `json:"agent,omitempty"`
	Task   string `json:"task"`
	// At is when the sub-agent was first spawned; its wall-time budget
	// counts from there, across restarts.
	At time.Time `json:"at,omitzero"`
}

// SubAgentFinished records a sub-agent's final answer and subtree usage.
// A sub-agent that was cancelled, failed or stopped by its budget has one
// too, with what its subtree spent until then.
type SubAgentFinished struct {
	CallID  string      `json:"call_id"`
	Child   string      `json:"child"`
	Outcome TurnOutcome `json:"outcome"`
	Result  string      `json:"result"`
	Usage   Usage       `json:"usage"`
	Cost    float64     `json:"cost,omitempty"`
	// RoundTrips counts the model calls of the subtree.
	RoundTrips int `json:"round_trips,omitempty"`
}

// JournalType implements JournalEvent.
func (Activated) JournalType() string { return "activated" }

// JournalType implements JournalEvent.
func (UserMessage) JournalType() string { return "user_message" }

// JournalType implements JournalEvent.
func (AssistantMessage) JournalType() string { return "assistant_message" }

// JournalType implements JournalEvent.
func (ToolCallStarted) JournalType() string { return "tool_call_started" }

// JournalType implements JournalEvent.
func (ToolResult) JournalType() string { return "tool_result" }

// JournalType implements JournalEvent.
func (TurnCompleted) JournalType() string { return "turn_completed" }

// JournalType implements JournalEvent.
func (TurnCancelled) JournalType() string { return "turn_cancelled" }

// JournalType implements JournalEvent.
func (Compacted) JournalType() string { return "compacted" }

// JournalType implements JournalEvent.
func (ApprovalRequested) JournalType() string { return "approval_requested" }

// JournalType implements JournalEvent.
func (ApprovalGranted) JournalType() string { return "approval_granted" }

// JournalType implements JournalEvent.
func (ElicitationRequested) JournalType() string { return "elicitation_requested" }

// JournalType implements JournalEvent.
func (ElicitationResolved) JournalType() string { return "elicitation_resolved" }

// JournalType implements JournalEvent.
func (SamplingAnswered) JournalType() string { return "sampling_answered" }

// JournalType implements JournalEvent.
func (ApprovalDenied) JournalType() string { return "approval_denied" }

// JournalType implements JournalEvent.
func (AgentSwitched) JournalType() string { return "agent_switched" }

// JournalType implements JournalEvent.
func (SubAgentSpawned) JournalType() string { return "subagent_spawned" }

// JournalType implements JournalEvent.
func (SubAgentFinished) JournalType() string { return "subagent_finished" }

func (Activated) isJournalEvent()            {}
func (UserMessage) isJournalEvent()          {}
func (AssistantMessage) isJournalEvent()     {}
func (ToolCallStarted) isJournalEvent()      {}
func (ToolResult) isJournalEvent()           {}
func (TurnCompleted) isJournalEvent()        {}
func (TurnCancelled) isJournalEvent()        {}
func (Compacted) isJournalEvent()            {}
func (ApprovalRequested) isJournalEvent()    {}
func (ApprovalGranted) isJournalEvent()      {}
func (ElicitationRequested) isJournalEvent() {}
func (ElicitationResolved) isJournalEvent()  {}
func (SamplingAnswered) isJournalEvent()     {}
func (ApprovalDenied) isJournalEvent()       {}
func (AgentSwitched) isJournalEvent()        {}
func (SubAgentSpawned) isJournalEvent()      {}
func (SubAgentFinished) isJournalEvent()     {}

func newJournalEvent(typ string) JournalEvent {
	switch typ {
	case "activated":
		return &Activated{}
	case "user_message":
		return &UserMessage{}
	case "assistant_message":
		return &AssistantMessage{}
	case "tool_call_started":
		return &ToolCallStarted{}
	case "tool_result":
		return &ToolResult{}
	case "turn_completed":
		return &TurnCompleted{}
	case "turn_cancelled":
		return &TurnCancelled{}
	case "compacted":
		return &Compacted{}
	case "approval_requested":
		return &ApprovalRequested{}
	case "approval_granted":
		return &ApprovalGranted{}
	case "elicitation_requested":
		return &ElicitationRequested{}
	case "elicitation_resolved":
		return &ElicitationResolved{}
	case "sampling_answered":
		return &SamplingAnswered{}
	case "approval_denied":
		return &ApprovalDenied{}
	case "agent_switched":
		return &AgentSwitched{}
	case "subagent_spawned":
		return &SubAgentSpawned{}
	case "subagent_finished":
		return &SubAgentFinished{}
	}
	return nil
}

// NewEnvelope wraps ev in an envelope of the current version with the given
// sequence number and time.
func NewEnvelope(seq uint64, at time.Time, ev JournalEvent) (Envelope, error) {
	data, ok := appendEventJSON(make([]byte, 0, eventSizeHint(ev)), ev)
	if !ok {
		var err error
		if data, err = json.Marshal(ev); err != nil {
			return Envelope{}, fmt.Errorf("journal event %s: %w", ev.JournalType(), err)
		}
	}
	return Envelope{V: EnvelopeVersion, Seq: seq, Type: ev.JournalType(), At: at.UTC(), Data: data}, nil
}

// Decode returns the event in the envelope as a value (UserMessage, not
// *UserMessage), or a *DecodeError. It reads versions 1 and 2.
func (e Envelope) Decode() (JournalEvent, error) {
	if e.V != 1 && e.V != EnvelopeVersion {
		return nil, &DecodeError{Seq: e.Seq, Type: e.Type, Err: fmt.Errorf("%w %d (this build reads %d)", ErrUnknownVersion, e.V, EnvelopeVersion)}
	}
	ptr := newJournalEvent(e.Type)
	if ptr == nil {
		return nil, &DecodeError{Seq: e.Seq, Type: e.Type, Err: ErrUnknownType}
	}
	if err := json.Unmarshal(e.Data, ptr); err != nil {
		return nil, &DecodeError{Seq: e.Seq, Type: e.Type, Err: fmt.Errorf("%w: %w", ErrCorrupt, err)}
	}
	return deref(ptr).(JournalEvent), nil
}

// DecodeEnvelope parses the stored bytes of an envelope and its event,
// verifying the checksum first: an entry that does not match its checksum,
// or a version 2 entry without one, yields a *DecodeError wrapping
// ErrCorrupt and ErrChecksum, and is never decoded. A version 1 entry
// predates checksums and is decoded as it is. Bytes that are not an envelope
// yield a *DecodeError wrapping ErrCorrupt. Every error carries the given
// seq (the caller's key), so the entry is named even when its own seq
// cannot be read.
func DecodeEnvelope(seq uint64, b []byte) (Envelope, JournalEvent, error) {
	body, sum, sealed := splitChecksum(b)
	if sealed && checksum(body) != sum {
		return Envelope{}, nil, &DecodeError{Seq: seq, Err: fmt.Errorf("%w: %w (stored crc %08x, entry has %08x)", ErrCorrupt, ErrChecksum, sum, checksum(body))}
	}
	var env Envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return Envelope{}, nil, &DecodeError{Seq: seq, Err: fmt.Errorf("%w: %w", ErrCorrupt, err)}
	}
	if !sealed && env.V == EnvelopeVersion {
		return env, nil, &DecodeError{Seq: seq, Type: env.Type, Err: fmt.Errorf("%w: %w: version %d envelope without its checksum", ErrCorrupt, ErrChecksum, env.V)}
	}
	if env.Seq != seq {
		return env, nil, &DecodeError{Seq: seq, Type: env.Type, Err: fmt.Errorf("%w: envelope says seq %d", ErrCorrupt, env.Seq)}
	}
	ev, err := env.Decode()
	return env, ev, err
}

// deref turns a pointer to a struct into the struct value.
func deref(ptr any) any { return reflect.ValueOf(ptr).Elem().Interface() }
