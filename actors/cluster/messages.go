package cluster

// This file holds the messages members exchange, and the registry that
// names them on the wire.

import (
	"time"

	"github.com/agcore/agcore/actors"
)

// SubmitTurn asks a session's grain to run a user message as a turn, or to
// follow the turn of the same TurnID that is already journaled: resending
// it never runs the turn twice, so the request loop may retry it.
type SubmitTurn struct {
	// TurnID is the client's id of the turn. Required.
	TurnID string `json:"turn_id"`
	// Text is the user message.
	Text string `json:"text"`
	// Wait is how long the grain waits for the turn's end before it
	// answers Pending; the caller then sends the same SubmitTurn again.
	Wait time.Duration `json:"wait_ns"`
}

// TurnReply answers SubmitTurn.
type TurnReply struct {
	// Member is the address (host:port) of the member that hosts the grain.
	Member string `json:"member"`
	// Pending reports that the turn had not ended after SubmitTurn.Wait.
	Pending bool `json:"pending,omitempty"`
	// Result is how the turn ended, when it ended.
	Result *actors.TurnResult `json:"result,omitempty"`
	// Error says why the turn could not run, or why it failed.
	Error string `json:"error,omitempty"`
	// Fenced reports that the member's copy of the session was superseded
	// by a newer activation before it journaled the submission; the same
	// SubmitTurn sent again reaches the current activation.
	Fenced bool `json:"fenced,omitempty"`
}

// StatusRequest asks a session's grain for the session's status. It only
// reads, so the request loop may retry it.
type StatusRequest struct{}

// StatusReply answers StatusRequest.
type StatusReply struct {
	Member string        `json:"member"`
	Status actors.Status `json:"status"`
	Error  string        `json:"error,omitempty"`
}

// CancelTurn asks a session's grain to cancel the running turn. Sent
// again, it could cancel a later turn, so the request loop sends it once.
type CancelTurn struct{}

// CancelReply answers CancelTurn.
type CancelReply struct {
	Member    string `json:"member"`
	Cancelled bool   `json:"cancelled"`
	Error     string `json:"error,omitempty"`
}

// UnknownReply answers a message whose type the grain's member does not
// know (Unknown).
type UnknownReply struct {
	Member string `json:"member"`
	Type   string `json:"type"`
}

// Wire names of the messages.
const (
	NameSubmitTurn    = "agcore.SubmitTurn.v1"
	NameTurnReply     = "agcore.TurnReply.v1"
	NameStatusRequest = "agcore.StatusRequest.v1"
	NameStatusReply   = "agcore.StatusReply.v1"
	NameCancelTurn    = "agcore.CancelTurn.v1"
	NameCancelReply   = "agcore.CancelReply.v1"
	NameUnknownReply  = "agcore.UnknownReply.v1"

	NameMemberStatusRequest = "agcore.MemberStatusRequest.v1"
	NameMemberStatusReply   = "agcore.MemberStatusReply.v1"
)

// NewMessages returns a registry of every message above and of the
// members' status messages (overview.go).
func NewMessages() *Registry {
	r := NewRegistry()
	Register[SubmitTurn](r, NameSubmitTurn)
	Register[TurnReply](r, NameTurnReply)
	Register[StatusRequest](r, NameStatusRequest)
	Register[StatusReply](r, NameStatusReply)
	Register[CancelTurn](r, NameCancelTurn)
	Register[CancelReply](r, NameCancelReply)
	Register[UnknownReply](r, NameUnknownReply)
	Register[MemberStatusRequest](r, NameMemberStatusRequest)
	Register[MemberStatusReply](r, NameMemberStatusReply)
	return r
}
