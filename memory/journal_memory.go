package memory

// This file holds MemoryJournal, the Journal kept in process memory.

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
)

// MemoryJournal is a Journal kept in process memory: nothing survives the
// process, and nothing is written anywhere. It is what a runtime that is
// never durable journals into (actors.NewInMemory), at a fraction of the
// cost of a Badger journal on an in-memory store: an append takes its
// session's lock, checks and writes, and returns; there is no transaction,
// no write channel and no writer goroutine.
//
// It keeps the semantics of BadgerJournal: sequence numbers from 1, the
// compare-and-append on the expected tail (ErrConflict), fencing by
// activation (ErrFenced), ErrTooLarge, the same checks of session ids and
// events, credentials masked with JournalOptions.Redactor before an event
// is stored, and a snapshot of the folded State every SnapshotEvery events,
// which Load starts from. Entries are kept in their stored form, the
// versioned envelope with its CRC-32C checksum that BadgerJournal writes,
// and are verified on every read.
//
// Concurrency: each session has its own lock, found in a concurrent map
// without a lock of the journal's, so appends to different sessions never
// wait for each other; the appends to one session are totally ordered. A
// session's entries are released by Delete, and every session's by Close.
type MemoryJournal struct {
	opts JournalOptions
	log  zerolog.Logger
	// snaps writes snapshots in the background; nil unless
	// JournalOptions.SnapshotInBackground.
	snaps *snapshotter
	// sessions maps a session id to its *memSession. An entry is removed
	// (and marked gone) when its journal is deleted or stays empty.
	sessions sync.Map
	closed   atomic.Bool

	// whileLocked, when set (by tests, before the first write), runs in
	// every write with the session's lock held, before the write is made.
	whileLocked func(session string)
	// beforeKeep, when set (by tests, before the first write), runs in
	// Snapshot between the fold and keeping its result.
	beforeKeep func(session string)
}

// memSession is one session's journal.
type memSession struct {
	mu sync.Mutex
	// Guarded by mu.
	head    head
	entries [][]byte // entries[i] is the stored entry seq i+1; never changed in place
	snap    []byte   // the stored latest snapshot, of entry snapSeq; nil when none
	snapSeq uint64
	gone    bool // deleted or released: a writer looks the session up again
}

var (
	_ Journal          = (*MemoryJournal)(nil)
	_ ActivateAppender = (*MemoryJournal)(nil)
)

// NewMemoryJournal returns an empty journal in memory. opts.Durability is
// checked as NewJournal checks it, and then ignored: the journal's
// Durability is DurabilityNone.
func NewMemoryJournal(opts JournalOptions) (*MemoryJournal, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	opts.Durability = DurabilityNone
	j := &MemoryJournal{opts: opts, log: opts.Logger.With().Str("component", "journal").Logger()}
	if opts.SnapshotInBackground && opts.SnapshotEvery > 0 {
		j.snaps = newSnapshotter(j.Snapshot, j.snapshotFailed)
	}
	return j, nil
}

// Durability returns DurabilityNone: nothing outlives the process.
func (j *MemoryJournal) Durability() Durability { return DurabilityNone }

// Close cancels the background snapshots not yet written and releases
// every session's journal; later calls fail with ErrClosed. It is safe to
// call more than once.
func (j *MemoryJournal) Close() error {
	if j.closed.Swap(true) {
		return nil
	}
	j.snaps.stop()
	// A writer checks closed once it holds its session's lock, so a
	// session it writes to is either released here or refused there.
	j.sessions.Range(func(id, v any) bool {
		j.release(id.(string), v.(*memSession))
		return true
	})
	return nil
}

// release drops s, the journal of session, from the journal and frees what
// it holds.
func (j *MemoryJournal) release(session string, s *memSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j.releaseLocked(session, s)
}

// releaseLocked is release with s's lock held.
func (j *MemoryJournal) releaseLocked(session string, s *memSession) {
	s.gone = true
	s.head, s.entries, s.snap, s.snapSeq = head{}, nil, nil, 0
	j.sessions.CompareAndDelete(session, s)
}

// lock returns the journal of session, created when there is none, with
// its lock held. Call unlock when done.
func (j *MemoryJournal) lock(ctx context.Context, session string) (*memSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for {
		if j.closed.Load() {
			return nil, ErrClosed
		}
		v, ok := j.sessions.Load(session)
		if !ok {
			v, _ = j.sessions.LoadOrStore(session, &memSession{})
		}
		s := v.(*memSession)
		s.mu.Lock()
		if j.closed.Load() {
			// Close may have passed this session by: release it here.
			j.releaseLocked(session, s)
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if !s.gone {
			if j.whileLocked != nil {
				j.whileLocked(session)
			}
			return s, nil
		}
		s.mu.Unlock()
	}
}

// unlock unlocks s, the journal of session, and releases it when it holds
// nothing (a first write that was refused).
func (j *MemoryJournal) unlock(session string, s *memSession) {
	if s.head.Tail == 0 {
		j.releaseLocked(session, s)
	}
	s.mu.Unlock()
}

// view returns the journal of session with its lock held, or nil when the
// session has none (or the journal is closed). Call s.mu.Unlock when done.
func (j *MemoryJournal) view(session string) *memSession {
	v, ok := j.sessions.Load(session)
	if !ok {
		return nil
	}
	s := v.(*memSession)
	s.mu.Lock()
	if s.gone || s.head.Tail == 0 {
		s.mu.Unlock()
		return nil
	}
	return s
}

// add appends the stored entries vals after the tail and sets the head.
// The caller holds s.mu.
func (s *memSession) add(activation uint64, vals ...[]byte) opResult {
	res := opResult{activation: activation, prevTail: s.head.Tail, tail: s.head.Tail + uint64(len(vals))}
	s.entries = append(s.entries, vals...)
	s.head = head{Tail: res.tail, Activation: activation}
	return res
}

// Activate implements Journal.
func (j *MemoryJournal) Activate(ctx context.Context, session, node string) (activation, tail uint64, err error) {
	return j.activate(ctx, session, node, nil, nil)
}

// ActivateAppend implements ActivateAppender.
func (j *MemoryJournal) ActivateAppend(ctx context.Context, session, node string, expectTail uint64, events ...messages.JournalEvent) (activation, tail uint64, err error) {
	return j.activate(ctx, session, node, &expectTail, events)
}

// activate appends an Activated event, after expectTail when it is not
// nil, then events.
func (j *MemoryJournal) activate(ctx context.Context, session, node string, expectTail *uint64, events []messages.JournalEvent) (activation, tail uint64, err error) {
	if err := ValidateSession(session); err != nil {
		return 0, 0, err
	}
	at := j.opts.Clock() // read before the events' time, as Activate then Append would
	var encoded []encodedEvent
	if len(events) > 0 {
		if encoded, _, err = encodeEvents(j.opts, session, events); err != nil {
			return 0, 0, err
		}
	}
	wrap := func(err error) error {
		if expectTail != nil {
			return fmt.Errorf("memory: journal activate %s after %d: %w", session, *expectTail, err)
		}
		return fmt.Errorf("memory: journal activate %s: %w", session, err)
	}
	s, err := j.lock(ctx, session)
	if err != nil {
		return 0, 0, wrap(err)
	}
	res, err := s.activate(at, node, expectTail, encoded)
	j.unlock(session, s)
	if err != nil {
		return 0, 0, wrap(err)
	}
	j.maybeSnapshot(ctx, session, res)
	return res.activation, res.tail, nil
}

// activate is MemoryJournal.activate with s's lock held.
func (s *memSession) activate(at time.Time, node string, expectTail *uint64, encoded []encodedEvent) (opResult, error) {
	h := s.head
	if expectTail != nil && h.Tail != *expectTail {
		return opResult{}, fmt.Errorf("%w: expected tail %d, tail is %d", ErrConflict, *expectTail, h.Tail)
	}
	next := h.Activation + 1
	act, err := encodeActivated(messages.Envelope.EncodeTrusted, h.Tail+1, at, next, node)
	if err != nil {
		return opResult{}, err
	}
	vals, err := sealEvents(messages.Envelope.EncodeTrusted, h.Tail+2, encoded)
	if err != nil {
		return opResult{}, err
	}
	res := s.add(next, act)
	if len(vals) > 0 {
		res = s.add(next, vals...)
	}
	res.prevTail = h.Tail
	return res, nil
}

// Append implements Journal.
func (j *MemoryJournal) Append(ctx context.Context, session string, activation, expectTail uint64, events ...messages.JournalEvent) (uint64, error) {
	if err := ValidateSession(session); err != nil {
		return 0, err
	}
	if len(events) == 0 {
		return 0, fmt.Errorf("memory: journal append %s: %w: no events", session, ErrInvalidEvent)
	}
	encoded, _, err := encodeEvents(j.opts, session, events)
	if err != nil {
		return 0, err
	}
	s, err := j.lock(ctx, session)
	if err != nil {
		return 0, fmt.Errorf("memory: journal append %s after %d: %w", session, expectTail, err)
	}
	res, err := s.append(activation, expectTail, encoded)
	j.unlock(session, s)
	if err != nil {
		return 0, fmt.Errorf("memory: journal append %s after %d: %w", session, expectTail, err)
	}
	j.maybeSnapshot(ctx, session, res)
	return res.tail, nil
}

// append is Append with s's lock held.
func (s *memSession) append(activation, expectTail uint64, encoded []encodedEvent) (opResult, error) {
	h := s.head
	if activation != 0 && activation != h.Activation {
		return opResult{}, fmt.Errorf("%w: activation %d, current %d", ErrFenced, activation, h.Activation)
	}
	if h.Tail != expectTail {
		return opResult{}, fmt.Errorf("%w: expected tail %d, tail is %d", ErrConflict, expectTail, h.Tail)
	}
	vals, err := sealEvents(messages.Envelope.EncodeTrusted, h.Tail+1, encoded)
	if err != nil {
		return opResult{}, err
	}
	return s.add(h.Activation, vals...), nil
}

// Tail implements Journal.
func (j *MemoryJournal) Tail(ctx context.Context, session string) (uint64, error) {
	if err := ValidateSession(session); err != nil {
		return 0, err
	}
	if err := j.usable(ctx); err != nil {
		return 0, fmt.Errorf("memory: journal tail %s: %w", session, err)
	}
	s := j.view(session)
	if s == nil {
		return 0, nil
	}
	defer s.mu.Unlock()
	return s.head.Tail, nil
}

// usable returns ctx's error, or ErrClosed once the journal is closed.
func (j *MemoryJournal) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if j.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Read implements Journal. It yields the entries up to the tail as it was
// when the iteration started.
func (j *MemoryJournal) Read(ctx context.Context, session string, from uint64) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		if err := ValidateSession(session); err != nil {
			yield(Entry{}, err)
			return
		}
		if err := j.usable(ctx); err != nil {
			yield(Entry{}, fmt.Errorf("memory: journal read %s: %w", session, err))
			return
		}
		from = max(from, 1)
		var entries [][]byte
		if s := j.view(session); s != nil {
			if from <= s.head.Tail {
				entries = s.entries[from-1 : s.head.Tail : s.head.Tail]
			}
			s.mu.Unlock()
		}
		for i, val := range entries {
			if i%readPage == readPage-1 {
				if err := ctx.Err(); err != nil {
					yield(Entry{}, err)
					return
				}
			}
			env, ev, err := decodeEntry(session, rawEntry{seq: from + uint64(i), val: val})
			if err != nil {
				yield(Entry{}, err)
				return
			}
			if !yield(Entry{Envelope: env, Event: ev}, nil) {
				return
			}
		}
	}
}

// Sessions implements Journal. It yields the sessions that had a journal
// when the iteration started.
func (j *MemoryJournal) Sessions(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := j.usable(ctx); err != nil {
			yield("", fmt.Errorf("memory: journal sessions: %w", err))
			return
		}
		var ids []string
		j.sessions.Range(func(id, v any) bool {
			s := v.(*memSession)
			s.mu.Lock()
			if !s.gone && s.head.Tail > 0 {
				ids = append(ids, id.(string))
			}
			s.mu.Unlock()
			return true
		})
		slices.Sort(ids)
		for _, id := range ids {
			if !yield(id, nil) {
				return
			}
		}
	}
}

// stored is a session's journal as one moment saw it.
type stored struct {
	tail    uint64
	entries [][]byte // the entries 1 to tail
	snap    []byte
	snapSeq uint64
}

// load folds the session's latest usable snapshot with the entries after
// it, as one moment of its journal holds them.
func (j *MemoryJournal) load(ctx context.Context, session string) (*State, error) {
	if err := j.usable(ctx); err != nil {
		return nil, err
	}
	s := j.view(session)
	if s == nil {
		return nil, fmt.Errorf("memory: journal load %s: %w", session, ErrNotFound)
	}
	at := stored{tail: s.head.Tail, entries: s.entries[:s.head.Tail:s.head.Tail], snap: s.snap, snapSeq: s.snapSeq}
	s.mu.Unlock()
	st := &State{}
	if at.snap != nil {
		if snap := usableSnapshot(j.log, session, at.snap, at.snapSeq, at.tail); snap != nil {
			st = snap
		}
	}
	raw := make([]rawEntry, 0, at.tail-st.Seq)
	for i, val := range at.entries[st.Seq:] {
		raw = append(raw, rawEntry{seq: st.Seq + 1 + uint64(i), val: val})
	}
	return foldEntries(ctx, session, st, at.tail, raw)
}

// Load implements Journal. The State is consistent with one moment of the
// journal; every entry after the snapshot must match its checksum, or Load
// fails with a *CorruptError naming it.
func (j *MemoryJournal) Load(ctx context.Context, session string) (*State, error) {
	if err := ValidateSession(session); err != nil {
		return nil, err
	}
	st, err := j.load(ctx, session)
	if err != nil {
		return nil, loadErr(session, err)
	}
	return st, nil
}

// Delete implements Journal: the session's entries and snapshot are
// released at once.
func (j *MemoryJournal) Delete(ctx context.Context, session string) error {
	if err := ValidateSession(session); err != nil {
		return err
	}
	if err := j.usable(ctx); err != nil {
		return fmt.Errorf("memory: journal delete %s: %w", session, err)
	}
	if v, ok := j.sessions.Load(session); ok {
		j.release(session, v.(*memSession))
	}
	return nil
}

// maybeSnapshot takes a snapshot when the write crossed a multiple of
// SnapshotEvery.
func (j *MemoryJournal) maybeSnapshot(ctx context.Context, session string, res opResult) {
	if crossesSnapshot(j.opts.SnapshotEvery, res.prevTail, res.tail) {
		takeSnapshot(ctx, j.snaps, j.Snapshot, j.log, session)
	}
}

// snapshotFailed logs a snapshot that could not be taken.
func (j *MemoryJournal) snapshotFailed(session string, err error) {
	logSnapshotFailed(j.log, session, err)
}

// Snapshot folds the session's journal and keeps the State as its latest
// snapshot, replacing the older one. Appends call it every SnapshotEvery
// events; it is exported for tools and tests. The journal is folded
// without holding the session's lock, so appends go on meanwhile; a
// snapshot of a journal deleted in the meantime is dropped.
func (j *MemoryJournal) Snapshot(ctx context.Context, session string) error {
	if err := ValidateSession(session); err != nil {
		return err
	}
	v, ok := j.sessions.Load(session)
	if !ok {
		return fmt.Errorf("memory: journal load %s: %w", session, ErrNotFound)
	}
	st, err := j.load(ctx, session)
	if err != nil {
		return loadErr(session, err)
	}
	b, err := encodeSnapshot(st)
	if err != nil {
		return fmt.Errorf("memory: snapshot %s: %w", session, err)
	}
	if j.beforeKeep != nil {
		j.beforeKeep(session)
	}
	s := v.(*memSession)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.gone && st.Seq <= s.head.Tail && (s.snap == nil || st.Seq > s.snapSeq) {
		s.snap, s.snapSeq = b, st.Seq
	}
	return nil
}
