package actors

// This file holds the package's sentinel errors and error types.

import (
	"errors"
	"fmt"

	"github.com/agcore/agcore/messages"
)

// Sentinel errors.
var (
	// ErrSessionBusy is returned for a user message that arrives while a
	// turn is running under MidTurnReject, and for an agent switch asked
	// mid-turn.
	ErrSessionBusy = errors.New("actors: session busy")
	// ErrClosed is returned by a Runtime (or its sessions) after Shutdown.
	ErrClosed = errors.New("actors: runtime closed")
	// ErrSlowSubscriber ends an event stream whose consumer fell so far
	// behind that its buffer filled up with events that cannot be dropped.
	ErrSlowSubscriber = errors.New("actors: event subscriber too slow")
	// ErrUnknownAgent is returned when switching to an agent profile that
	// does not exist.
	ErrUnknownAgent = errors.New("actors: unknown agent")
	// ErrSessionStopped is wrapped by every *SessionStoppedError.
	ErrSessionStopped = errors.New("actors: session stopped")
	// ErrTurnNotFound is returned for a resubmitted turn id whose turn
	// cannot be found in the journal any more.
	ErrTurnNotFound = errors.New("actors: turn not found")
	// ErrUnknownApproval is returned by Runtime.Approve when the session
	// has no pending approval of that tool call (unknown session or call,
	// already answered, expired).
	ErrUnknownApproval = errors.New("actors: no such pending approval")
	// ErrSessionNotFound is returned by Runtime.Delete for a session that
	// has no journal and no actor.
	ErrSessionNotFound = errors.New("actors: session not found")
	// ErrSessionDeleted ends the streams of a session that Runtime.Delete
	// removed, and refuses to activate it while the deletion runs.
	ErrSessionDeleted = errors.New("actors: session deleted")
)

// SessionStoppedError says that a session was stopped by its supervisor
// (its restart budget ran out, or another activation fenced it off). Reason
// is the supervisor's reason.
type SessionStoppedError struct {
	Session string
	Reason  error
}

func (e *SessionStoppedError) Error() string {
	return fmt.Sprintf("actors: session %s stopped: %v", e.Session, e.Reason)
}

// Unwrap returns ErrSessionStopped and the reason.
func (e *SessionStoppedError) Unwrap() []error { return []error{ErrSessionStopped, e.Reason} }

// TurnError is returned by Session.Submit for a turn that failed or was
// cancelled; the *TurnResult is returned alongside it.
type TurnError struct {
	Session string
	Turn    int
	Outcome messages.TurnOutcome
	Reason  string
}

func (e *TurnError) Error() string {
	return fmt.Sprintf("actors: session %s turn %d %s: %s", e.Session, e.Turn, e.Outcome, e.Reason)
}
