package memory

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/redact"

	"github.com/agcore/agcore/messages"
)

// Journal errors.
var (
	// ErrConflict is returned by Append when the session's tail is not the
	// one the caller expected: someone else appended first.
	ErrConflict = errors.New("memory: journal tail conflict")
	// ErrFenced is returned by Append when the caller's activation has been
	// superseded by a newer Activate. The writer must stop, not retry.
	ErrFenced = errors.New("memory: journal writer fenced by a newer activation")
	// ErrOutcomeUnknown is returned when the context ended while an append
	// was queued for commit: it may or may not have been journaled (read the
	// tail to find out).
	ErrOutcomeUnknown = errors.New("memory: append outcome unknown")
	// ErrTooLarge is returned for an append whose encoded events exceed
	// MaxAppendBytes.
	ErrTooLarge = errors.New("memory: append too large")
)

// MaxAppendBytes is the largest total size of the encoded events of one
// Append (it keeps an append within one Badger transaction).
const MaxAppendBytes = 1 << 20

// Journal is the per-session, append-only log of journal events: the source
// of truth for recovering a session. Implementations are safe for concurrent
// use; the appends to one session are totally ordered by their sequence
// numbers (1, 2, 3, ...), and an append is all-or-nothing.
type Journal interface {
	// Activate records a new activation of session (appends
	// messages.Activated with the next activation number) and returns that
	// number and the new tail. Appends made with an older activation number
	// fail with ErrFenced.
	Activate(ctx context.Context, session, node string) (activation, tail uint64, err error)
	// Append appends events atomically after expectTail (the seq of the
	// session's last entry; 0 = empty journal) and returns the seq of the
	// last appended event. ErrConflict when the tail differs, ErrFenced when
	// activation is non-zero and superseded. Durability per
	// JournalOptions.Durability: when Append returns nil, the events are as
	// durable as the mode promises. Append keeps no reference to events
	// once it returns: the caller may reuse the slice.
	Append(ctx context.Context, session string, activation, expectTail uint64, events ...messages.JournalEvent) (uint64, error)
	// Read yields entries with seq >= from in order; a corrupt entry yields a
	// *messages.DecodeError-wrapping error that names the session and seq
	// (entries before it stay readable), and ends the sequence. Breaking out
	// of the loop releases everything Read holds.
	Read(ctx context.Context, session string, from uint64) iter.Seq2[Entry, error]
	// Tail returns the seq of the session's last entry, 0 for an empty or
	// unknown session.
	Tail(ctx context.Context, session string) (uint64, error)
	// Sessions yields the ids of the sessions that have a journal, in
	// byte order.
	Sessions(ctx context.Context) iter.Seq2[string, error]
	// Load returns the session's State: the latest snapshot folded with the
	// entries after it. ErrNotFound when the session has no journal.
	Load(ctx context.Context, session string) (*State, error)
	// Delete removes the session's journal and snapshots. It must not race
	// with writers of the same session; a later Activate starts afresh.
	Delete(ctx context.Context, session string) error
}

// ActivateAppender is implemented by a Journal that can activate a session
// and append events after the activation in one write: a session that
// starts with a write (a new session's first message) then costs one
// transaction, and one fsync, instead of two. The result is the same as an
// Activate followed by an Append of the events with the new activation.
type ActivateAppender interface {
	// ActivateAppend appends messages.Activated with the next activation
	// number after expectTail, then events (there may be none), atomically,
	// and returns the activation and the new tail. ErrConflict when the
	// tail differs from expectTail. Durability is Append's when there are
	// events; an activation appended alone acknowledges nothing, and an
	// implementation may return before it is durable, provided the next
	// durable append makes it durable too (a crash before then loses only
	// the activation). Like Append, it keeps no reference to events once it
	// returns.
	ActivateAppend(ctx context.Context, session, node string, expectTail uint64, events ...messages.JournalEvent) (activation, tail uint64, err error)
}

// Entry is one journal entry: the stored envelope and its decoded event.
type Entry struct {
	Envelope messages.Envelope
	Event    messages.JournalEvent
}

// EntryError says which journal entry could not be read. It wraps the
// *messages.DecodeError (or a storage error).
type EntryError struct {
	Session string
	Seq     uint64
	Err     error
}

// Error names the session and sequence number.
func (e *EntryError) Error() string {
	return fmt.Sprintf("memory: journal %s seq %d: %v", e.Session, e.Seq, e.Err)
}

// Unwrap returns the cause, usually a *messages.DecodeError.
func (e *EntryError) Unwrap() error { return e.Err }

// Durability says when an append reaches stable storage.
type Durability int

// The durability modes.
const (
	// DurabilitySync fsyncs every append before it returns. Appenders
	// waiting at the same time share one fsync.
	DurabilitySync Durability = iota
	// DurabilityBatch commits concurrent appends together (group commit):
	// they share one transaction and one fsync, and each caller still waits
	// until its own append is durable.
	DurabilityBatch
	// DurabilityNone returns once the append is committed, without fsync:
	// a machine crash may lose recent appends (a process crash does not).
	DurabilityNone
)

// String returns "sync", "batch" or "none".
func (d Durability) String() string {
	switch d {
	case DurabilitySync:
		return "sync"
	case DurabilityBatch:
		return "batch"
	case DurabilityNone:
		return "none"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

// JournalOptions configures a journal. The zero value is valid and fsyncs
// every append.
type JournalOptions struct {
	// Durability says when an append reaches disk. Zero means DurabilitySync.
	Durability Durability
	// SnapshotEvery is the number of events between snapshots. Zero means
	// 500; negative disables them.
	SnapshotEvery int
	// SnapshotInBackground writes the snapshots that appends call for on a
	// goroutine of the journal, one at a time, instead of inside the append
	// that crosses a multiple of SnapshotEvery: that append then returns as
	// soon as its events are durable, rather than after folding and encoding
	// the session's journal. A snapshot request that finds 256 sessions
	// waiting is dropped (the next multiple asks again; Load replays more
	// entries meanwhile). Close cancels the snapshots not yet written. The
	// zero value writes each snapshot before the append returns, so a
	// snapshot is in place as soon as the append that called for it is.
	SnapshotInBackground bool
	// Clock stamps the envelopes. Nil means time.Now.
	Clock func() time.Time
	// Logger receives diagnostics. The zero Logger discards them.
	Logger zerolog.Logger
	// Redactor masks credentials in every event before it is stored (and
	// checksummed), with redact.Redactor.ContentJSON: configured values
	// and credentials of known shapes never reach the disk. Nil masks the
	// known shapes only; pass the process's Redactor so that its configured
	// keys and secrets are masked too.
	Redactor *redact.Redactor
}

func (o JournalOptions) withDefaults() (JournalOptions, error) {
	switch o.Durability {
	case DurabilitySync, DurabilityBatch, DurabilityNone:
	default:
		return o, fmt.Errorf("memory: JournalOptions.Durability: unknown mode %d", int(o.Durability))
	}
	if o.SnapshotEvery == 0 {
		o.SnapshotEvery = 500
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o, nil
}
