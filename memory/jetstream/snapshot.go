package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agcore/agcore/memory"
)

// snapshotRecord is the stored form of a snapshot: the State as JSON and
// the CRC-32C of exactly those bytes, as in the Badger journal.
type snapshotRecord struct {
	V     int             `json:"v"`
	CRC   uint32          `json:"crc"`
	State json.RawMessage `json:"state"`
}

// snapshotVersion is the snapshot format this package writes and reads.
const snapshotVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeSnapshot returns the stored form of st.
func encodeSnapshot(st *memory.State) ([]byte, error) {
	state, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return json.Marshal(snapshotRecord{V: snapshotVersion, CRC: crc32.Checksum(state, castagnoli), State: state})
}

// decodeSnapshot reads a stored snapshot of entry seq.
func decodeSnapshot(b []byte, seq uint64) (*memory.State, error) {
	var rec snapshotRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("undecodable snapshot: %w", err)
	}
	if rec.V != snapshotVersion {
		return nil, fmt.Errorf("snapshot version %d, this build reads %d", rec.V, snapshotVersion)
	}
	if sum := crc32.Checksum(rec.State, castagnoli); sum != rec.CRC {
		return nil, fmt.Errorf("snapshot checksum mismatch: stored %08x, state has %08x", rec.CRC, sum)
	}
	var st memory.State
	if err := json.Unmarshal(rec.State, &st); err != nil {
		return nil, fmt.Errorf("undecodable snapshot state: %w", err)
	}
	if st.Seq != seq {
		return nil, fmt.Errorf("snapshot stored for seq %d holds the state at seq %d", seq, st.Seq)
	}
	return &st, nil
}

// latestSnapshot returns the session's latest snapshot that passes its
// checks and lies within h, with the stream sequence of the record it ends
// at; or an empty State and 0. A snapshot that fails is logged and
// skipped: the journal is the source of truth, and is replayed instead.
func (j *Journal) latestSnapshot(ctx context.Context, session string, h head) (*memory.State, uint64) {
	if j.cfg.Options.SnapshotEvery < 0 {
		return &memory.State{}, 0
	}
	actx, cancel := context.WithTimeout(ctx, j.cfg.AttemptTimeout)
	defer cancel()
	m, err := j.stream(session).GetLastMsgForSubject(actx, j.snapSubject(session))
	if errors.Is(err, njs.ErrMsgNotFound) {
		return &memory.State{}, 0
	}
	st, anchor, err := checkSnapshot(m, err, h)
	if err != nil {
		j.log.Warn().Err(err).Str("session", session).Msg("skipping snapshot; replaying the journal")
		return &memory.State{}, 0
	}
	return st, anchor
}

// checkSnapshot decodes a stored snapshot read with err, and checks that it
// lies within the journal whose head is h.
func checkSnapshot(m *njs.RawStreamMsg, err error, h head) (*memory.State, uint64, error) {
	if err != nil {
		return nil, 0, err
	}
	seq, err1 := strconv.ParseUint(m.Header.Get(hdrSnapSeq), 10, 64)
	anchor, err2 := strconv.ParseUint(m.Header.Get(hdrSnapAnchor), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return nil, 0, fmt.Errorf("unreadable snapshot header: %w", err)
	}
	if seq > h.last || anchor > h.streamSeq {
		return nil, 0, fmt.Errorf("snapshot at seq %d (stream sequence %d) is past the journal's tail %d (%d)", seq, anchor, h.last, h.streamSeq)
	}
	st, err := decodeSnapshot(m.Data, seq)
	if err != nil {
		return nil, 0, err
	}
	return st, anchor, nil
}

// maybeSnapshot writes a snapshot when a write from prevTail to tail
// crossed a multiple of SnapshotEvery. A snapshot only shortens Load, so a
// failure is logged and does not fail the write, which is journaled.
func (j *Journal) maybeSnapshot(ctx context.Context, session string, prevTail, tail uint64) {
	n := uint64(j.cfg.Options.SnapshotEvery)
	if j.cfg.Options.SnapshotEvery < 0 || prevTail/n == tail/n {
		return
	}
	if err := j.Snapshot(ctx, session); err != nil {
		j.log.Warn().Err(err).Str("session", session).Msg("snapshot not written; Load replays more entries")
	}
}

// Snapshot folds the session's journal and stores the State on the
// session's snapshot subject, then purges the older snapshots. Appends call
// it every SnapshotEvery events; it is exported for tools and tests.
func (j *Journal) Snapshot(ctx context.Context, session string) error {
	st, anchor, err := j.load(ctx, session)
	if err != nil {
		return err
	}
	b, err := encodeSnapshot(st)
	if err != nil {
		return fmt.Errorf("jetstream: snapshot %s: %w", session, err)
	}
	subj := j.snapSubject(session)
	m := nats.NewMsg(subj)
	m.Header.Set(hdrSnapSeq, strconv.FormatUint(st.Seq, 10))
	m.Header.Set(hdrSnapAnchor, strconv.FormatUint(anchor, 10))
	m.Data = b
	actx, cancel := context.WithTimeout(ctx, j.cfg.AttemptTimeout)
	defer cancel()
	if _, err := j.js.PublishMsg(actx, m); err != nil {
		return fmt.Errorf("jetstream: snapshot %s at %d: %w", session, st.Seq, err)
	}
	if err := j.stream(session).Purge(actx, njs.WithPurgeSubject(subj), njs.WithPurgeKeep(1)); err != nil {
		return fmt.Errorf("jetstream: snapshot %s at %d: purge older snapshots: %w", session, st.Seq, err)
	}
	return nil
}
