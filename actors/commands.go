package actors

// This file holds the messages of the session actor. Commands come from
// outside the actor (Session handles, the Runtime, a TaskAgent) through
// the runtime's directory of live sessions (see sessionRef); the other
// messages come from the work the actor started (model calls, tool calls,
// sub-agents, timers, services). Every message of started work carries the
// generation of the work it belongs to, so that a late message from
// cancelled work is ignored.

import (
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// command marks the messages that reach a session through the runtime's
// directory: the actor counts them, so that it passivates only once it has
// received every command posted to it (see Runtime.retire).
type command interface{ isCommand() }

// submitCmd submits a user message. sub, when set, receives the turn's
// events; task marks the task a parent gives its sub-agent, whose end the
// sub-agent reports to it.
type submitCmd struct {
	turnID string
	msg    messages.Message
	sub    *subscriber
	task   bool
	// params override the agent's request parameters for the turn.
	params RequestParams
	// parent is the span of the tool call that spawned a sub-agent's task,
	// the parent of its turn's span.
	parent trace.SpanContext
	// output is the structured answer the turn must end with, if any.
	output *turnOutput
}

// cancelCmd cancels the running turn, if any, and the sub-agents the
// session runs outside its turns.
type cancelCmd struct {
	reason string
	reply  chan bool // reports whether anything was cancelled; may be nil
}

// statusCmd asks for the session's status.
type statusCmd struct{ reply chan Status }

// switchAgentCmd switches the session's agent profile.
type switchAgentCmd struct {
	name  string
	reply chan error
}

// watchCmd subscribes to every event of the session.
type watchCmd struct{ sub *subscriber }

// approvalsCmd asks for the session's pending approvals.
type approvalsCmd struct{ reply chan []PendingApproval }

// drainCmd asks to be told once no turn runs (Runtime.Shutdown).
type drainCmd struct{ reply chan struct{} }

// stopCmd stops the session for good: its running turn is cancelled (and
// the cancellation journaled), and its callers get err.
type stopCmd struct {
	cancelReason string
	err          error
}

// faultCmd makes the session actor fail with err, as a bug would. It is
// sent only by tests, to exercise supervision.
type faultCmd struct{ err error }

func (*submitCmd) isCommand()         {}
func (*cancelCmd) isCommand()         {}
func (*statusCmd) isCommand()         {}
func (*switchAgentCmd) isCommand()    {}
func (*watchCmd) isCommand()          {}
func (*approvalsCmd) isCommand()      {}
func (*approvalAnswerCmd) isCommand() {}
func (*settleCmd) isCommand()         {}
func (*planStepCmd) isCommand()       {}
func (*stepCancelCmd) isCommand()     {}
func (*drainCmd) isCommand()          {}
func (*stopCmd) isCommand()           {}
func (*faultCmd) isCommand()          {}

// modelDelta is a piece of streamed assistant text.
type modelDelta struct {
	gen  uint64
	text string
}

// modelDone ends a model call; prompt holds the prompt layers it used.
type modelDone struct {
	gen    uint64
	req    *messages.Request
	resp   *messages.Response
	err    error
	prompt *promptLayers
}

// toolDone ends a tool call; panicked is what the tool panicked with.
type toolDone struct {
	gen      uint64
	callID   string
	result   toolsys.Result
	err      error
	panicked any
}

// toolDeadline says that a tool call's deadline has passed. arm is the
// arming of the deadline it comes from: a deadline disarmed (the call
// waits for approval) or armed again since is stale.
type toolDeadline struct {
	gen    uint64
	callID string
	arm    uint64
}

// toolProgress is a tool's progress report for a call in flight.
type toolProgress struct {
	gen      uint64
	callID   string
	progress toolsys.Progress
	// latch counts the call's reports in the mailbox (see progressLatch).
	latch *progressLatch
}

// compactDone carries the compactor's answer.
type compactDone struct {
	gen     uint64
	forTurn bool
	force   bool
	event   *messages.Compacted
	err     error
	elapsed time.Duration
}

// idleTick is the idle timer of a session: it fires Config.IdleTimeout
// after it was armed, and carries the number of the actor instance that
// armed it and the count of messages that instance had handled then.
type idleTick struct {
	instance uint64
	activity uint64
}

// Status is a snapshot of a session.
type Status struct {
	Session string `json:"session"`
	// Agent is the active agent profile.
	Agent string `json:"agent"`
	// NextTurn is the index the next turn will get.
	NextTurn int `json:"next_turn"`
	// Running reports whether a turn is in progress; Turn and TurnID name it.
	Running bool   `json:"running"`
	Turn    int    `json:"turn"`
	TurnID  string `json:"turn_id,omitempty"`
	// Queued counts submissions waiting for the running turn.
	Queued int `json:"queued"`
	// Usage and Cost are the session's totals: its own model calls and the
	// subtrees of its finished sub-agents.
	Usage messages.Usage `json:"usage"`
	Cost  float64        `json:"cost"`
	// RoundTrips counts the same model calls as Usage.
	RoundTrips int `json:"round_trips"`
	// Activation is the journal activation of the session's actor.
	Activation uint64 `json:"activation"`
	// Messages is the length of the stored history.
	Messages int `json:"messages"`
}
