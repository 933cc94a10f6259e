package memory

// This file holds what every journal of this package stores the same way:
// the checks and encoding of appended events, the activation entry, the
// decoding of stored entries, the fold of entries into a State, and the
// snapshot record.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
)

// encodedEvent is an event marshalled ahead of its write, waiting for its
// sequence number.
type encodedEvent struct{ env messages.Envelope }

// sameBytes reports whether a and b are the same slice.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// encodeEvents checks and encodes events for an append to session, ahead of
// the write, masking credentials with opts.Redactor, and returns them with
// their total size. Their sequence numbers are set by sealEvents.
func encodeEvents(opts JournalOptions, session string, events []messages.JournalEvent) ([]encodedEvent, int, error) {
	at := opts.Clock()
	encoded := make([]encodedEvent, len(events))
	size := 0
	for i, ev := range events {
		if err := ValidateEvent(ev); err != nil {
			return nil, 0, fmt.Errorf("memory: journal append %s event %d: %w", session, i, err)
		}
		env, err := messages.NewEnvelope(0, at, ev)
		if err != nil {
			return nil, 0, fmt.Errorf("memory: journal append %s event %d: %w", session, i, err)
		}
		// The event's JSON, as NewEnvelope made it, is stored without
		// being checked again; masked JSON is checked once.
		if masked := opts.Redactor.ContentJSON(env.Data); !sameBytes(masked, env.Data) {
			if !json.Valid(masked) {
				return nil, 0, fmt.Errorf("memory: journal append %s event %d: %w: masking credentials left invalid JSON", session, i, ErrInvalidEvent)
			}
			env.Data = masked
		}
		encoded[i] = encodedEvent{env}
		size += len(env.Data) + 128
	}
	if size > MaxAppendBytes {
		return nil, 0, fmt.Errorf("memory: journal append %s: %w: %d bytes (max %d)", session, ErrTooLarge, size, MaxAppendBytes)
	}
	return encoded, size, nil
}

// sealEvents numbers encoded from first on and returns their stored forms.
func sealEvents(encode func(messages.Envelope) ([]byte, error), first uint64, encoded []encodedEvent) ([][]byte, error) {
	vals := make([][]byte, len(encoded))
	for i, e := range encoded {
		e.env.Seq = first + uint64(i)
		var err error
		if vals[i], err = encode(e.env); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// encodeActivated returns the stored form of entry seq, the Activated event
// of activation number act on node.
func encodeActivated(encode func(messages.Envelope) ([]byte, error), seq uint64, at time.Time, act uint64, node string) ([]byte, error) {
	env, err := messages.NewEnvelope(seq, at, messages.Activated{Activation: act, Node: node})
	if err != nil {
		return nil, err
	}
	return encode(env)
}

// crossesSnapshot reports whether a write that moved a session's tail from
// prev to tail crossed a multiple of every (negative: never).
func crossesSnapshot(every int, prev, tail uint64) bool {
	if every < 0 {
		return false
	}
	n := uint64(every)
	return prev/n != tail/n
}

// rawEntry is a stored entry read out of the store.
type rawEntry struct {
	seq uint64
	val []byte
}

// decodeEntry verifies and decodes a stored entry. An entry that fails its
// checksum or cannot be parsed is a *CorruptError; one written by a newer
// version (unknown envelope version or event type) is an *EntryError.
func decodeEntry(session string, r rawEntry) (messages.Envelope, messages.JournalEvent, error) {
	env, ev, err := messages.DecodeEnvelope(r.seq, r.val)
	switch {
	case err == nil:
		return env, ev, nil
	case errors.Is(err, messages.ErrChecksum):
		return env, nil, &CorruptError{Session: session, Seq: r.seq, Problem: "checksum mismatch", Err: err}
	case errors.Is(err, messages.ErrCorrupt) && len(r.val) == 0:
		// Badger hands back an empty value when it cannot read one (its
		// value-log checksum failed), and logs why.
		return env, nil, &CorruptError{Session: session, Seq: r.seq, Problem: "empty value: the store could not read it", Err: err}
	case errors.Is(err, messages.ErrCorrupt):
		return env, nil, &CorruptError{Session: session, Seq: r.seq, Problem: "undecodable entry", Err: err}
	}
	return env, nil, &EntryError{Session: session, Seq: r.seq, Err: err}
}

// missingEntry reports that entry seq (up to tail) is not in the journal.
func missingEntry(session string, seq, tail uint64) error {
	return &CorruptError{Session: session, Seq: seq, Problem: fmt.Sprintf("missing entry (the journal's tail is %d)", tail)}
}

// foldEntries applies entries, which must be the entries st.Seq+1 to tail
// in order, to st. A missing entry, or one that fails its checks, is an
// error naming it.
func foldEntries(ctx context.Context, session string, st *State, tail uint64, entries []rawEntry) (*State, error) {
	next := st.Seq + 1
	for _, r := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.seq != next {
			return nil, missingEntry(session, next, tail)
		}
		env, ev, err := decodeEntry(session, r)
		if err != nil {
			return nil, err
		}
		if err := st.Apply(env, ev); err != nil {
			return nil, &EntryError{Session: session, Seq: env.Seq, Err: err}
		}
		next++
	}
	if next != tail+1 {
		return nil, missingEntry(session, next, tail)
	}
	st.Trim()
	return st, nil
}

// snapshotRecord is the stored form of a snapshot: the State as JSON and
// the CRC-32C of exactly those bytes.
type snapshotRecord struct {
	V     int             `json:"v"`
	CRC   uint32          `json:"crc"`
	State json.RawMessage `json:"state"`
}

// snapshotVersion is the snapshot format this package writes and reads.
// Version 2 added State.RoundTrips and State.Unfinished; version 3 the
// checksum. An older snapshot is ignored: Load replays the journal instead.
const snapshotVersion = 3

// encodeSnapshot returns the stored form of st.
func encodeSnapshot(st *State) ([]byte, error) {
	state, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return json.Marshal(snapshotRecord{V: snapshotVersion, CRC: crc32c(state), State: state})
}

// decodeSnapshot reads a stored snapshot of the entry seq. It fails when
// the record is of another version, does not match its checksum, or holds
// a State of another seq.
func decodeSnapshot(b []byte, seq uint64) (*State, error) {
	var rec snapshotRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("undecodable snapshot: %w", err)
	}
	if rec.V != snapshotVersion {
		return nil, fmt.Errorf("%w: snapshot version %d, this build reads %d", errOldSnapshot, rec.V, snapshotVersion)
	}
	if sum := crc32c(rec.State); sum != rec.CRC {
		return nil, fmt.Errorf("snapshot checksum mismatch: stored %08x, state has %08x", rec.CRC, sum)
	}
	var st State
	if err := json.Unmarshal(rec.State, &st); err != nil {
		return nil, fmt.Errorf("undecodable snapshot state: %w", err)
	}
	if st.Seq != seq {
		return nil, fmt.Errorf("snapshot stored under seq %d holds the state at seq %d", seq, st.Seq)
	}
	return &st, nil
}

// errOldSnapshot marks a snapshot written by an older version: skipping it
// is expected, not damage.
var errOldSnapshot = errors.New("snapshot of an older format")

// usableSnapshot decodes the stored snapshot b of entry seq of a journal
// whose tail is tail, or returns nil when it fails its checks: the snapshot
// is skipped (and logged at warn level, unless it is merely of an older
// format), and the journal, the source of truth, is replayed instead.
func usableSnapshot(log zerolog.Logger, session string, b []byte, seq, tail uint64) *State {
	snap, err := decodeSnapshot(b, seq)
	if err == nil && seq > tail {
		err = fmt.Errorf("snapshot at seq %d is past the journal's tail %d", seq, tail)
	}
	switch {
	case err == nil:
		return snap
	case errors.Is(err, errOldSnapshot):
		log.Debug().Err(err).Str("session", session).Uint64("seq", seq).Msg("skipping snapshot")
	default:
		log.Warn().Err(err).Str("session", session).Uint64("seq", seq).Msg("skipping damaged snapshot; replaying the journal")
	}
	return nil
}

// takeSnapshot takes the snapshot of session that a write called for:
// hands it to snaps, the journal's background snapshotter, or else takes it
// at once. A snapshot only shortens Load, so a failure to take one is
// logged and does not fail the write, which has already been journaled.
func takeSnapshot(ctx context.Context, snaps *snapshotter, take func(context.Context, string) error, log zerolog.Logger, session string) {
	if snaps != nil {
		snaps.request(session)
		return
	}
	if err := take(ctx, session); err != nil {
		logSnapshotFailed(log, session, err)
	}
}

// logSnapshotFailed logs a snapshot that could not be written.
func logSnapshotFailed(log zerolog.Logger, session string, err error) {
	log.Warn().Err(err).Str("session", session).Msg("snapshot not written; Load replays more entries")
}
