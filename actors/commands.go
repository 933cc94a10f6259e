package actors

import (
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// The messages of the session actor. Commands come from Session handles;
// the others from the actor's children and the service actors. Every child
// message carries the generation of the work it belongs to, so that a late
// message from cancelled work is ignored.

// submitCmd submits a user message. sub receives the turn's events.
type submitCmd struct {
	turnID string
	msg    messages.Message
	sub    *subscriber
	seen   bool // handled by the current actor instance; owned by the actor
}

// cancelCmd cancels the running turn, if any.
type cancelCmd struct {
	reason string
	reply  chan bool // reports whether a turn was cancelled; may be nil
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

// modelDelta is a piece of streamed assistant text.
type modelDelta struct {
	gen  uint64
	text string
}

// modelDone ends a model call.
type modelDone struct {
	gen  uint64
	req  *messages.Request
	resp *messages.Response
	err  error
}

// toolDone ends a tool call.
type toolDone struct {
	gen    uint64
	callID string
	result toolsys.Result
	err    error
}

// toolDeadline says that a tool call's deadline has passed.
type toolDeadline struct {
	gen    uint64
	callID string
}

// compactDone carries the compactor's answer.
type compactDone struct {
	gen     uint64
	forTurn bool
	event   *messages.Compacted
	err     error
	elapsed time.Duration
}

// faultCmd makes the session actor fail with err, as a bug would. It is
// sent only by tests, to exercise supervision.
type faultCmd struct{ err error }

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
