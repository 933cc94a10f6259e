package chaos

import "fmt"

// Invariant names one property the checker holds a journal to.
type Invariant string

// The invariants Check verifies.
const (
	// InvJournalReadable: every entry of the journal decodes and matches
	// its checksum, and the journal loads into a session state.
	InvJournalReadable Invariant = "journal_readable"
	// InvSequence: the entries are numbered 1, 2, 3, ... up to the tail,
	// without a gap or a repeat.
	InvSequence Invariant = "sequence_contiguous"
	// InvAckPresent: every acknowledged user message is journaled exactly
	// once.
	InvAckPresent Invariant = "ack_present_once"
	// InvAckOrder: the acknowledged user messages of a session are
	// journaled in the order they were acknowledged.
	InvAckOrder Invariant = "ack_in_order"
	// InvTurnIDOnce: a client turn id is journaled with one user message
	// at most (a retried submission is not run twice).
	InvTurnIDOnce Invariant = "turn_id_once"
	// InvTurnEndedOnce: a turn ends (completed, failed or cancelled) at
	// most once.
	InvTurnEndedOnce Invariant = "turn_ended_once"
	// InvToolAnswered: every tool call of a turn that completed has
	// exactly one result (an interrupted call is answered as such), and
	// every result answers a call.
	InvToolAnswered Invariant = "tool_answered_once"
	// InvToolStartedOnce: a call of a tool that is neither idempotent nor
	// read-only is started at most once.
	InvToolStartedOnce Invariant = "tool_started_once"
	// InvTurnResumable: a turn left open is one the session can resume
	// (and, once the runtime has settled, none is left open).
	InvTurnResumable Invariant = "turn_ended_or_resumable"
	// InvHistory: the history folded from the journal is a valid model
	// request (each tool message follows the call it answers).
	InvHistory Invariant = "history_valid"
)

// Violation is one broken invariant, located in a session's journal.
type Violation struct {
	// Session is the session whose journal breaks the invariant.
	Session string `json:"session"`
	// Seq is the entry where the break shows, 0 when no single entry does
	// (a message that is missing, the journal as a whole).
	Seq uint64 `json:"seq,omitempty"`
	// Invariant is the property broken.
	Invariant Invariant `json:"invariant"`
	// Problem says what is wrong, in words.
	Problem string `json:"problem"`
}

// String reads like "session s1 seq 12: tool_started_once: ...".
func (v Violation) String() string {
	if v.Seq > 0 {
		return fmt.Sprintf("session %s seq %d: %s: %s", v.Session, v.Seq, v.Invariant, v.Problem)
	}
	return fmt.Sprintf("session %s: %s: %s", v.Session, v.Invariant, v.Problem)
}
