package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/dgraph-io/badger/v4"

	"github.com/agcore/agcore/messages"
)

// FindingKind classifies a Finding.
type FindingKind string

// The kinds of findings.
const (
	// FindingCorrupt is a journal that cannot be replayed as recorded: an
	// entry missing, altered, undecodable, or one that does not fold. The
	// session refuses to activate; Quarantine moves it aside.
	FindingCorrupt FindingKind = "corrupt"
	// FindingNewer is an entry written by a newer version (unknown
	// envelope version or event type): this build cannot replay it, a newer
	// one can.
	FindingNewer FindingKind = "newer"
	// FindingSnapshot is a snapshot that fails its checks (Load skips it
	// and replays the journal) or disagrees with the journal it covers.
	// RepairSnapshots replaces it.
	FindingSnapshot FindingKind = "snapshot"
	// FindingLeftover is harmless: entries or snapshots past the tail, or
	// without a head, left by an interrupted Delete. They are never read.
	FindingLeftover FindingKind = "leftover"
)

// Finding is one problem Verify found in a session's journal.
type Finding struct {
	Kind FindingKind `json:"kind"`
	// Seq is the entry (or snapshot) concerned, 0 when none is.
	Seq     uint64 `json:"seq,omitempty"`
	Problem string `json:"problem"`
}

// Damage reports whether the finding keeps the session from being replayed
// as recorded.
func (f Finding) Damage() bool { return f.Kind == FindingCorrupt || f.Kind == FindingNewer }

// SessionReport is what Verify found in one session's journal.
type SessionReport struct {
	Session    string `json:"session"`
	Tail       uint64 `json:"tail"`
	Activation uint64 `json:"activation"`
	// Entries is the number of entries read and verified.
	Entries uint64 `json:"entries"`
	// Unsealed counts the version 1 entries, written before checksums:
	// they decode, but damage to them cannot be told from data.
	Unsealed uint64 `json:"unsealed,omitempty"`
	// Snapshot is the seq of the snapshot Load starts from, 0 for none.
	Snapshot uint64    `json:"snapshot,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
}

// Damaged reports whether a finding keeps the session from being replayed.
func (r SessionReport) Damaged() bool {
	for _, f := range r.Findings {
		if f.Damage() {
			return true
		}
	}
	return false
}

// Corrupt reports whether a finding is corruption (FindingCorrupt).
func (r SessionReport) Corrupt() bool {
	for _, f := range r.Findings {
		if f.Kind == FindingCorrupt {
			return true
		}
	}
	return false
}

// Verify checks the session's whole journal, reading every entry from the
// first: each must be there from 1 to the tail, match its checksum, decode,
// and fold into a State. Each snapshot must match its checksum and equal the
// fold of the entries it covers. Unlike Load it goes on past a damaged
// entry, so it reports every problem; it changes nothing. ErrNotFound when
// the session has no journal.
func (j *BadgerJournal) Verify(ctx context.Context, session string) (SessionReport, error) {
	rep := SessionReport{Session: session}
	if err := ValidateSession(session); err != nil {
		return rep, err
	}
	err := view(j.db, func(txn *badger.Txn) error {
		h, ok, err := headIn(txn, session)
		if ce, isCorrupt := errors.AsType[*CorruptError](err); isCorrupt {
			rep.Findings = append(rep.Findings, Finding{Kind: FindingCorrupt, Problem: ce.detail()})
			return nil
		}
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("memory: verify %s: %w", session, ErrNotFound)
		}
		rep.Tail, rep.Activation = h.Tail, h.Activation
		snaps := readSnapshots(txn, session)
		folded, err := verifyEntries(ctx, txn, session, h.Tail, snaps, &rep)
		if err != nil {
			return err
		}
		checkSnapshots(snaps, folded, h.Tail, &rep)
		return nil
	})
	if err != nil {
		return rep, dbErr(err)
	}
	return rep, nil
}

// storedSnapshot is a snapshot key's content, decoded or not.
type storedSnapshot struct {
	seq   uint64
	state *State
	err   error
}

// readSnapshots reads every snapshot of the session.
func readSnapshots(txn *badger.Txn, session string) []storedSnapshot {
	o := badger.DefaultIteratorOptions
	o.Prefix = seqPrefix(prefixSnapshot, session)
	it := txn.NewIterator(o)
	defer it.Close()
	var out []storedSnapshot
	for it.Rewind(); it.Valid(); it.Next() {
		seq, _ := keySeq(it.Item().Key())
		s := storedSnapshot{seq: seq}
		s.err = it.Item().Value(func(v []byte) error {
			var err error
			s.state, err = decodeSnapshot(v, seq)
			return err
		})
		out = append(out, s)
	}
	return out
}

// verifyEntries reads the session's entries, adding a finding per problem,
// and folds them while they are sound. It returns the encoded fold at the
// seq of each snapshot it reached.
func verifyEntries(ctx context.Context, txn *badger.Txn, session string, tail uint64, snaps []storedSnapshot, rep *SessionReport) (map[uint64][]byte, error) {
	wanted := map[uint64]bool{}
	for _, s := range snaps {
		wanted[s.seq] = true
	}
	folded := map[uint64][]byte{}
	st, sound := &State{}, true
	o := badger.DefaultIteratorOptions
	o.Prefix = seqPrefix(prefixJournal, session)
	it := txn.NewIterator(o)
	defer it.Close()
	next, past := uint64(1), 0
	for it.Rewind(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		seq, _ := keySeq(it.Item().Key())
		if seq > tail {
			past++
			continue
		}
		if seq != next {
			rep.Findings = append(rep.Findings, Finding{Kind: FindingCorrupt, Seq: next, Problem: missingRange(next, seq-1)})
			sound = false
		}
		next = seq + 1
		rep.Entries++
		v, err := it.Item().ValueCopy(nil)
		if err != nil {
			rep.Findings = append(rep.Findings, Finding{Kind: FindingCorrupt, Seq: seq, Problem: "stored entry unreadable: " + err.Error()})
			sound = false
			continue
		}
		env, ev, err := decodeEntry(session, rawEntry{seq: seq, val: v})
		if err != nil {
			rep.Findings = append(rep.Findings, entryFinding(seq, err))
			sound = false
			continue
		}
		if env.V == 1 {
			rep.Unsealed++
		}
		if !sound {
			continue
		}
		if err := st.Apply(env, ev); err != nil {
			rep.Findings = append(rep.Findings, Finding{Kind: FindingCorrupt, Seq: seq, Problem: "does not fold: " + err.Error()})
			sound = false
			continue
		}
		if wanted[seq] {
			b, err := canonicalState(st)
			if err != nil {
				return nil, err
			}
			folded[seq] = b
		}
	}
	if next <= tail {
		rep.Findings = append(rep.Findings, Finding{Kind: FindingCorrupt, Seq: next, Problem: missingRange(next, tail)})
	}
	if past > 0 {
		rep.Findings = append(rep.Findings, Finding{Kind: FindingLeftover, Seq: tail + 1,
			Problem: fmt.Sprintf("%d entries past the tail, left by an interrupted delete; never read, overwritten by the next appends", past)})
	}
	return folded, nil
}

// entryFinding turns an entry's decoding error into a finding.
func entryFinding(seq uint64, err error) Finding {
	if de, ok := errors.AsType[*messages.DecodeError](err); ok && errors.Is(err, ErrCorrupt) {
		return Finding{Kind: FindingCorrupt, Seq: seq, Problem: de.Err.Error()}
	}
	if ce, ok := errors.AsType[*CorruptError](err); ok {
		return Finding{Kind: FindingCorrupt, Seq: seq, Problem: ce.detail()}
	}
	if errors.Is(err, messages.ErrUnknownVersion) || errors.Is(err, messages.ErrUnknownType) {
		return Finding{Kind: FindingNewer, Seq: seq, Problem: "written by a newer version: " + errors.Unwrap(err).Error()}
	}
	return Finding{Kind: FindingCorrupt, Seq: seq, Problem: err.Error()}
}

func missingRange(from, to uint64) string {
	if from == to {
		return fmt.Sprintf("entry %d is missing", from)
	}
	return fmt.Sprintf("entries %d to %d are missing", from, to)
}

// checkSnapshots compares each snapshot with the fold of the entries it
// covers, and notes the one Load would start from.
func checkSnapshots(snaps []storedSnapshot, folded map[uint64][]byte, tail uint64, rep *SessionReport) {
	for _, s := range snaps {
		switch {
		case errors.Is(s.err, errOldSnapshot):
			continue
		case s.err != nil:
			rep.Findings = append(rep.Findings, Finding{Kind: FindingSnapshot, Seq: s.seq, Problem: s.err.Error() + " (Load skips it and replays the journal)"})
			continue
		case s.seq > tail:
			rep.Findings = append(rep.Findings, Finding{Kind: FindingLeftover, Seq: s.seq, Problem: fmt.Sprintf("snapshot past the tail %d, left by an interrupted delete; Load skips it", tail)})
			continue
		}
		want, ok := folded[s.seq]
		if !ok {
			rep.Findings = append(rep.Findings, Finding{Kind: FindingSnapshot, Seq: s.seq, Problem: "cannot be compared: the entries it covers are damaged"})
			continue
		}
		got, err := canonicalState(s.state)
		if err == nil && !bytes.Equal(got, want) {
			err = errors.New("differs from the fold of the entries it covers")
		}
		if err != nil {
			rep.Findings = append(rep.Findings, Finding{Kind: FindingSnapshot, Seq: s.seq, Problem: "snapshot " + err.Error() + " (Load would start from it)"})
			continue
		}
		rep.Snapshot = max(rep.Snapshot, s.seq)
	}
}

// canonicalState encodes st in a form two equal states share: the JSON of
// its JSON round trip (which is how a snapshot comes back).
func canonicalState(st *State) ([]byte, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	var again State
	if err := json.Unmarshal(b, &again); err != nil {
		return nil, err
	}
	return json.Marshal(&again)
}

// Leftovers yields a report for each session id that has journal entries
// or snapshots but no head: what an interrupted Delete leaves. Nothing
// reads them; the next journal of the same id overwrites them.
func (j *BadgerJournal) Leftovers(ctx context.Context) iter.Seq2[SessionReport, error] {
	return func(yield func(SessionReport, error) bool) {
		var reps []SessionReport
		err := view(j.db, func(txn *badger.Txn) error {
			for _, prefix := range []string{prefixJournal, prefixSnapshot} {
				counts, order := map[string]int{}, []string(nil)
				o := badger.DefaultIteratorOptions
				o.Prefix, o.PrefetchValues = []byte(prefix), false
				it := txn.NewIterator(o)
				for it.Rewind(); it.Valid(); it.Next() {
					if err := ctx.Err(); err != nil {
						it.Close()
						return err
					}
					k := it.Item().Key()
					if len(k) < len(prefix)+10 {
						continue
					}
					id := string(k[len(prefix) : len(k)-9])
					if counts[id] == 0 {
						order = append(order, id)
					}
					counts[id]++
				}
				it.Close()
				for _, id := range order {
					if _, ok, err := headIn(txn, id); ok || err != nil {
						continue
					}
					what := "journal entries"
					if prefix == prefixSnapshot {
						what = "snapshots"
					}
					reps = append(reps, SessionReport{Session: id, Findings: []Finding{{Kind: FindingLeftover,
						Problem: fmt.Sprintf("%d %s without a head, left by an interrupted delete; never read", counts[id], what)}}})
				}
			}
			return nil
		})
		if err != nil {
			yield(SessionReport{}, fmt.Errorf("memory: journal leftovers: %w", dbErr(err)))
			return
		}
		for _, r := range reps {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// RepairSnapshots deletes the session's snapshots (derived data: the
// journal holds everything they do) and writes a fresh one from a full
// replay of the journal, which must be sound.
func (j *BadgerJournal) RepairSnapshots(ctx context.Context, session string) error {
	if err := ValidateSession(session); err != nil {
		return err
	}
	sh := j.store.heads.lock(session)
	err := deletePrefix(ctx, j.db, seqPrefix(prefixSnapshot, session))
	j.store.heads.unlock(session, sh)
	if err != nil {
		return fmt.Errorf("memory: repair snapshots of %s: %w", session, dbErr(err))
	}
	return j.Snapshot(ctx, session)
}
