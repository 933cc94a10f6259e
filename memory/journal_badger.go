package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
)

// readPage is the number of entries (or session ids) read per Badger read
// transaction; nothing is held open while the caller's loop body runs.
const readPage = 256

// BadgerJournal is the Journal kept in a Store's Badger database.
//
// Layout: entry seq of session s is the envelope JSON under
// j/<s>/<seq as 8 bytes big-endian>; t/<s> holds the tail and the current
// activation; s/<s>/<seq> holds the latest snapshot (an encoded State).
//
// Consistency: an append holds the session's lock (kept on the Store, so
// every Journal of the store shares it) while it takes the session's head,
// checks the activation and the expected tail (ErrFenced, ErrConflict), and
// writes the entries and the new t/<s> in one Badger transaction, until the
// write is durable. The store keeps each session's head in memory once a
// write has read or written it (see sessionHeads), so an append reads
// nothing from Badger: t/<s> is read by a session's first write only. The
// write transaction reads nothing either, so Badger does not check it for
// conflicts: that check walks every transaction committed since it began,
// and its cost grew with the number of sessions appending at once (10,000
// sessions in flight spent most of their time in it). Writers of different
// sessions never wait for each other.
//
// Durability: sync commits, then waits for a DB.Sync (which fsyncs the
// write-ahead log and value log) that started after its commit; the store
// runs one DB.Sync at a time, and the appenders that commit while one runs
// share the next (see syncer). Opening Badger with SyncWrites instead would
// make every write of every key space pay for a sync, and it is slower:
// with 64 concurrent writers on a 2-core machine, commit+DB.Sync ran about
// 5,500 writes/s against 1,100 with SyncWrites (equal at about 650/s for a
// single writer). Batch hands the append to one committer goroutine that
// folds every append waiting at that moment into one transaction and one
// sync, then answers each caller. None commits without Sync.
type BadgerJournal struct {
	store *Store
	db    *badger.DB
	opts  JournalOptions
	log   zerolog.Logger
	batch *committer // nil unless DurabilityBatch
	// snaps writes snapshots in the background; nil unless
	// JournalOptions.SnapshotInBackground.
	snaps *snapshotter
	// encode gives the stored form of an envelope whose Data is JSON:
	// messages.Envelope.EncodeTrusted (tests measure the cost of its
	// checksum against plain JSON).
	encode func(messages.Envelope) ([]byte, error)
}

var _ Journal = (*BadgerJournal)(nil)

// NewJournal returns a journal on store. A batch journal's committer stops
// when the journal or the store is closed; its pending appends are committed
// and synced first.
func NewJournal(store *Store, opts JournalOptions) (*BadgerJournal, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	j := &BadgerJournal{store: store, db: store.DB(), opts: opts, log: opts.Logger.With().Str("component", "journal").Logger(),
		encode: messages.Envelope.EncodeTrusted}
	if opts.Durability == DurabilityBatch {
		j.batch = newCommitter(j.db, j.store.syncs, j.log)
	}
	if opts.SnapshotInBackground && opts.SnapshotEvery > 0 {
		j.snaps = newSnapshotter(j.Snapshot, j.snapshotFailed)
	}
	if err := store.onClose(j.Close); err != nil {
		j.snaps.stop()
		j.batch.stop()
		return nil, err
	}
	return j, nil
}

// Close stops a batch journal's committer after committing and syncing what
// it holds, and cancels the background snapshots not yet written; later
// appends fail with ErrClosed. It is safe to call more than once, and the
// store calls it on Close.
func (j *BadgerJournal) Close() error {
	j.snaps.stop()
	return j.batch.stop()
}

// Durability returns the journal's durability mode.
func (j *BadgerJournal) Durability() Durability { return j.opts.Durability }

// opResult is what a write operation reports.
type opResult struct {
	activation uint64
	prevTail   uint64
	tail       uint64
}

// writeOp is a write to one session's journal. apply runs inside a
// read-write transaction with the session's head as it is when the
// transaction commits (the session's lock is held throughout); it either
// returns an error having written nothing, or writes and returns its result.
// It reads nothing, so a transaction of writeOps has no reads for Badger to
// check for conflicts.
type writeOp struct {
	session string
	apply   func(txn *badger.Txn, h head) (opResult, error)
	// unsynced marks a write that acknowledges nothing to anyone (an
	// activation appended alone): it is committed, and not waited on for
	// an fsync. The next synced write covers it, since Badger's write-ahead
	// log is written in commit order; a crash before then loses only the
	// activation, whose number the next activation takes again.
	unsynced bool
}

// Activate implements Journal.
func (j *BadgerJournal) Activate(ctx context.Context, session, node string) (activation, tail uint64, err error) {
	if err := ValidateSession(session); err != nil {
		return 0, 0, err
	}
	at := j.opts.Clock()
	op := writeOp{session: session, apply: func(txn *badger.Txn, h head) (opResult, error) {
		next := h.Activation + 1
		b, err := encodeActivated(j.encode, h.Tail+1, at, next, node)
		if err != nil {
			return opResult{}, err
		}
		res := opResult{activation: next, prevTail: h.Tail, tail: h.Tail + 1}
		if err := txn.Set(journalKey(session, res.tail), b); err != nil {
			return opResult{}, err
		}
		return res, txn.Set(headKey(session), head{Tail: res.tail, Activation: next}.encode())
	}}
	res, err := j.write(ctx, op, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("memory: journal activate %s: %w", session, err)
	}
	j.maybeSnapshot(ctx, session, res)
	return res.activation, res.tail, nil
}

// Append implements Journal.
func (j *BadgerJournal) Append(ctx context.Context, session string, activation, expectTail uint64, events ...messages.JournalEvent) (uint64, error) {
	if err := ValidateSession(session); err != nil {
		return 0, err
	}
	if len(events) == 0 {
		return 0, fmt.Errorf("memory: journal append %s: %w: no events", session, ErrInvalidEvent)
	}
	encoded, size, err := encodeEvents(j.opts, session, events)
	if err != nil {
		return 0, err
	}
	op := writeOp{session: session, apply: func(txn *badger.Txn, h head) (opResult, error) {
		if activation != 0 && activation != h.Activation {
			return opResult{}, fmt.Errorf("%w: activation %d, current %d", ErrFenced, activation, h.Activation)
		}
		if h.Tail != expectTail {
			return opResult{}, fmt.Errorf("%w: expected tail %d, tail is %d", ErrConflict, expectTail, h.Tail)
		}
		return j.setEvents(txn, session, h, encoded)
	}}
	res, err := j.write(ctx, op, size)
	if err != nil {
		return 0, fmt.Errorf("memory: journal append %s after %d: %w", session, expectTail, err)
	}
	j.maybeSnapshot(ctx, session, res)
	return res.tail, nil
}

var _ ActivateAppender = (*BadgerJournal)(nil)

// ActivateAppend implements ActivateAppender.
func (j *BadgerJournal) ActivateAppend(ctx context.Context, session, node string, expectTail uint64, events ...messages.JournalEvent) (activation, tail uint64, err error) {
	if err := ValidateSession(session); err != nil {
		return 0, 0, err
	}
	at := j.opts.Clock() // read before the events' time, as Activate then Append would
	encoded, size, err := encodeEvents(j.opts, session, events)
	if err != nil {
		return 0, 0, err
	}
	op := writeOp{session: session, apply: func(txn *badger.Txn, h head) (opResult, error) {
		if h.Tail != expectTail {
			return opResult{}, fmt.Errorf("%w: expected tail %d, tail is %d", ErrConflict, expectTail, h.Tail)
		}
		next := h.Activation + 1
		b, err := encodeActivated(j.encode, h.Tail+1, at, next, node)
		if err != nil {
			return opResult{}, err
		}
		if err := txn.Set(journalKey(session, h.Tail+1), b); err != nil {
			return opResult{}, err
		}
		res, err := j.setEvents(txn, session, head{Tail: h.Tail + 1, Activation: next}, encoded)
		res.prevTail = h.Tail
		return res, err
	}, unsynced: len(events) == 0}
	res, err := j.write(ctx, op, size+64)
	if err != nil {
		return 0, 0, fmt.Errorf("memory: journal activate %s after %d: %w", session, expectTail, err)
	}
	j.maybeSnapshot(ctx, session, res)
	return res.activation, res.tail, nil
}

// setEvents writes encoded after the head h, and the head that follows
// them, in txn.
func (j *BadgerJournal) setEvents(txn *badger.Txn, session string, h head, encoded []encodedEvent) (opResult, error) {
	vals, err := sealEvents(j.encode, h.Tail+1, encoded)
	if err != nil {
		return opResult{}, err
	}
	for i, v := range vals {
		if err := txn.Set(journalKey(session, h.Tail+1+uint64(i)), v); err != nil {
			return opResult{}, err
		}
	}
	res := opResult{activation: h.Activation, prevTail: h.Tail, tail: h.Tail + uint64(len(vals))}
	return res, txn.Set(headKey(session), head{Tail: res.tail, Activation: h.Activation}.encode())
}

// write runs op with the journal's durability, holding the session's lock
// until the write is durable (committed, for an unsynced op) or has failed. The head op applies to is the
// one the store keeps for the session, read from Badger only when it is not
// known (the session's first write since the store opened, or since a
// write whose outcome is unknown).
func (j *BadgerJournal) write(ctx context.Context, op writeOp, size int) (opResult, error) {
	if err := ctx.Err(); err != nil {
		return opResult{}, err
	}
	if j.store.isClosed() {
		return opResult{}, ErrClosed
	}
	if err := j.store.space.check(size); err != nil {
		return opResult{}, err
	}
	heads := &j.store.heads
	sh := heads.lock(op.session)
	locked := true
	defer func() {
		if locked {
			heads.unlock(op.session, sh)
		}
	}()
	h, err := j.headFor(sh, op.session)
	if err != nil {
		return opResult{}, err
	}
	if j.batch != nil && !op.unsynced {
		r := commitReq{op: op, head: h, size: size, done: make(chan commitRes, 1)}
		if err := j.batch.hand(ctx, r); err != nil {
			return opResult{}, err // not taken: nothing written
		}
		select {
		case res := <-r.done:
			settle(sh, res)
			return res.res, res.err
		case <-ctx.Done():
			// The committer answers every operation it took: the session
			// stays locked until it has, so the next writer finds the
			// head this write leaves.
			locked = false
			go func() {
				settle(sh, <-r.done)
				heads.unlock(op.session, sh)
			}()
			return opResult{}, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
		}
	}
	res := runOp(ctx, j.db, op, h)
	if res.err == nil && j.opts.Durability == DurabilitySync && !op.unsynced {
		if err := j.store.syncs.wait(); err != nil {
			res = commitRes{err: fmt.Errorf("sync (committed, durability unknown): %w", dbErr(err)), unknown: true}
		}
	}
	settle(sh, res)
	return res.res, res.err
}

// headFor returns the session's head: the one sh keeps, or else the one
// stored, which sh then keeps. The caller holds sh's lock.
func (j *BadgerJournal) headFor(sh *sessionHead, session string) (head, error) {
	if sh.known {
		return sh.head, nil
	}
	j.store.heads.reads.Add(1)
	var h head
	err := view(j.db, func(txn *badger.Txn) error {
		var err error
		h, _, err = headIn(txn, session)
		return err
	})
	if err != nil {
		return head{}, dbErr(err)
	}
	sh.set(h)
	return h, nil
}

// settle records in sh the head a write left: the new head when it
// succeeded, the same head when it was refused before writing anything,
// and an unknown head when its outcome is unknown.
func settle(sh *sessionHead, res commitRes) {
	switch {
	case res.err == nil:
		sh.set(head{Tail: res.res.tail, Activation: res.res.activation})
	case res.unknown:
		sh.forget()
	}
}

// runOp runs op on the head h in its own transaction. The caller holds the
// session's lock, so h is still the head when the transaction commits; the
// transaction only writes, so Badger has no reads to check for conflicts.
// A conflict is still retried, should one ever be reported. The result is
// unknown when the commit failed.
func runOp(ctx context.Context, db *badger.DB, op writeOp, h head) commitRes {
	for {
		if db.IsClosed() {
			return commitRes{err: dbErr(badger.ErrDBClosed)}
		}
		txn := db.NewTransaction(true)
		res, err := op.apply(txn, h)
		if err != nil {
			txn.Discard()
			return commitRes{err: dbErr(err)}
		}
		err = txn.Commit()
		if errors.Is(err, badger.ErrConflict) {
			if err := ctx.Err(); err != nil {
				return commitRes{err: err}
			}
			continue
		}
		if err != nil {
			return commitRes{err: dbErr(err), unknown: true}
		}
		return commitRes{res: res}
	}
}

// headOf reads the session's head in a read transaction; ok is false when
// the session has no journal.
func (j *BadgerJournal) headOf(session string) (h head, ok bool, err error) {
	err = view(j.db, func(txn *badger.Txn) error {
		var err error
		h, ok, err = headIn(txn, session)
		return err
	})
	return h, ok, dbErr(err)
}

// headIn reads the session's head in txn; ok is false when the session has
// no journal. An unreadable head is a *CorruptError.
func headIn(txn *badger.Txn, session string) (h head, ok bool, err error) {
	item, err := txn.Get(headKey(session))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return head{}, false, nil
	}
	if err != nil {
		return head{}, false, err
	}
	err = item.Value(func(v []byte) error {
		var err error
		h, err = decodeHead(v)
		return err
	})
	if err != nil {
		return head{}, true, &CorruptError{Session: session, Problem: "unreadable head record", Err: err}
	}
	return h, true, nil
}

// view runs fn in a read transaction. Badger panics on some damaged blocks
// of a table read after Open verified it; the panic becomes an error
// wrapping ErrCorruptStore.
func view(db *badger.DB, fn func(txn *badger.Txn) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: Badger failed reading it: %s", ErrCorruptStore, firstLine(fmt.Sprint(r)))
		}
	}()
	return db.View(fn)
}

// Tail implements Journal.
func (j *BadgerJournal) Tail(ctx context.Context, session string) (uint64, error) {
	if err := ValidateSession(session); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	h, _, err := j.headOf(session)
	if err != nil {
		return 0, fmt.Errorf("memory: journal tail %s: %w", session, err)
	}
	return h.Tail, nil
}

// Read implements Journal. It yields the entries up to the tail as it was
// when the iteration started, checking that they follow each other without
// a gap.
func (j *BadgerJournal) Read(ctx context.Context, session string, from uint64) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		if err := ValidateSession(session); err != nil {
			yield(Entry{}, err)
			return
		}
		h, _, err := j.headOf(session)
		if err != nil {
			yield(Entry{}, fmt.Errorf("memory: journal read %s: %w", session, err))
			return
		}
		for next := max(from, 1); next <= h.Tail; {
			if err := ctx.Err(); err != nil {
				yield(Entry{}, err)
				return
			}
			page, err := j.readEntries(session, next, h.Tail)
			if err != nil {
				yield(Entry{}, entryReadErr(session, next, err))
				return
			}
			if len(page) == 0 {
				j.yieldMissing(session, next, h, yield)
				return
			}
			for _, r := range page {
				if r.seq != next {
					j.yieldMissing(session, next, h, yield)
					return
				}
				env, ev, err := decodeEntry(session, r)
				if err != nil {
					yield(Entry{}, err)
					return
				}
				if !yield(Entry{Envelope: env, Event: ev}, nil) {
					return
				}
				next++
			}
		}
	}
}

// yieldMissing reports entry seq missing from the journal whose head was
// h when the read began, unless the head has changed since: the journal was
// deleted (or deleted and started again) while it was read, in pages, and
// the read just ends.
func (j *BadgerJournal) yieldMissing(session string, seq uint64, h head, yield func(Entry, error) bool) {
	now, ok, err := j.headOf(session)
	if err == nil && (!ok || now.Activation < h.Activation || now.Tail < h.Tail) {
		return
	}
	yield(Entry{}, missingEntry(session, seq, h.Tail))
}

// entryReadErr wraps a failure to read the entries from seq on: a closed
// store stays ErrClosed, a Badger failure on damaged data is corruption of
// this journal.
func entryReadErr(session string, seq uint64, err error) error {
	err = dbErr(err)
	if errors.Is(err, ErrClosed) {
		return &EntryError{Session: session, Seq: seq, Err: err}
	}
	return &CorruptError{Session: session, Seq: seq, Problem: "stored entry unreadable", Err: err}
}

// readEntries reads up to readPage entries with from <= seq <= tail.
func (j *BadgerJournal) readEntries(session string, from, tail uint64) ([]rawEntry, error) {
	var page []rawEntry
	err := view(j.db, func(txn *badger.Txn) error {
		var err error
		page, err = entriesIn(txn, session, from, tail, readPage)
		return err
	})
	return page, err
}

// entriesIn reads the entries with from <= seq <= tail in txn, at most limit
// of them (0 means all).
func entriesIn(txn *badger.Txn, session string, from, tail uint64, limit int) ([]rawEntry, error) {
	if from > tail {
		return nil, nil
	}
	o := badger.DefaultIteratorOptions
	o.Prefix = seqPrefix(prefixJournal, session)
	o.PrefetchSize = readPage
	if n := tail - from + 1; n < uint64(readPage) {
		o.PrefetchSize = int(n)
	}
	it := txn.NewIterator(o)
	defer it.Close()
	var page []rawEntry
	for it.Seek(journalKey(session, from)); it.Valid() && (limit == 0 || len(page) < limit); it.Next() {
		item := it.Item()
		seq, ok := keySeq(item.Key())
		if !ok || seq > tail {
			break
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return nil, err
		}
		page = append(page, rawEntry{seq: seq, val: v})
	}
	return page, nil
}

// Sessions implements Journal.
func (j *BadgerJournal) Sessions(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		seek := []byte(prefixHead)
		for {
			if err := ctx.Err(); err != nil {
				yield("", err)
				return
			}
			var ids []string
			err := view(j.db, func(txn *badger.Txn) error {
				o := badger.DefaultIteratorOptions
				o.Prefix = []byte(prefixHead)
				o.PrefetchValues = false
				it := txn.NewIterator(o)
				defer it.Close()
				for it.Seek(seek); it.Valid() && len(ids) < readPage; it.Next() {
					ids = append(ids, string(it.Item().Key()[len(prefixHead):]))
				}
				return nil
			})
			if err != nil {
				yield("", fmt.Errorf("memory: journal sessions: %w", dbErr(err)))
				return
			}
			for _, id := range ids {
				if !yield(id, nil) {
					return
				}
			}
			if len(ids) < readPage {
				return
			}
			seek = append([]byte(prefixHead+ids[len(ids)-1]), 0)
		}
	}
}

// Load implements Journal. It reads the head, the latest snapshot and the
// entries after it in one read transaction, so the State is consistent with
// one moment of the journal. Every entry must be there, in order, up to the
// tail, and match its checksum; otherwise Load fails with a *CorruptError.
func (j *BadgerJournal) Load(ctx context.Context, session string) (*State, error) {
	if err := ValidateSession(session); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var st *State
	err := view(j.db, func(txn *badger.Txn) error {
		var err error
		st, err = j.loadIn(ctx, txn, session)
		return err
	})
	if err != nil {
		return nil, loadErr(session, err)
	}
	return st, nil
}

// loadErr gives an error of loadIn, or of the transaction it ran in, the
// form Load returns.
func loadErr(session string, err error) error {
	if ce, ok := errors.AsType[*CorruptError](err); ok {
		return ce
	}
	var ee *EntryError
	if errors.Is(err, ErrNotFound) || errors.As(err, &ee) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("memory: journal load %s: %w", session, dbErr(err))
}

// loadIn folds the session's latest snapshot with the entries after it, as
// txn sees them.
func (j *BadgerJournal) loadIn(ctx context.Context, txn *badger.Txn, session string) (*State, error) {
	h, ok, err := headIn(txn, session)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("memory: journal load %s: %w", session, ErrNotFound)
	}
	tail := h.Tail
	st := j.latestSnapshotIn(txn, session, tail)
	entries, err := entriesIn(txn, session, st.Seq+1, tail, 0)
	if err != nil {
		return nil, err
	}
	return foldEntries(ctx, session, st, tail, entries)
}

// Delete implements Journal.
func (j *BadgerJournal) Delete(ctx context.Context, session string) error {
	if err := ValidateSession(session); err != nil {
		return err
	}
	if j.store.isClosed() {
		return ErrClosed
	}
	sh := j.store.heads.lock(session)
	defer j.store.heads.unlock(session, sh)
	defer sh.forget()
	// The snapshots go first and the head next, so that an interrupted
	// Delete leaves either the whole journal without snapshots, or no
	// visible journal: entries beyond the tail are never read, and are
	// overwritten by the next appends; a snapshot left behind could be
	// taken for one of the next journal of the same id.
	err := deletePrefix(ctx, j.db, seqPrefix(prefixSnapshot, session))
	if err == nil {
		err = j.db.Update(func(txn *badger.Txn) error { return txn.Delete(headKey(session)) })
	}
	if err == nil {
		err = deletePrefix(ctx, j.db, seqPrefix(prefixJournal, session))
	}
	if err == nil && j.opts.Durability != DurabilityNone {
		err = j.db.Sync()
	}
	if err != nil {
		return fmt.Errorf("memory: journal delete %s: %w", session, dbErr(err))
	}
	return nil
}

// deletePrefix deletes every key with the prefix, in transactions of at most
// 1000 deletions.
func deletePrefix(ctx context.Context, db *badger.DB, prefix []byte) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var keys [][]byte
		err := db.View(func(txn *badger.Txn) error {
			o := badger.DefaultIteratorOptions
			o.Prefix = prefix
			o.PrefetchValues = false
			it := txn.NewIterator(o)
			defer it.Close()
			for it.Rewind(); it.Valid() && len(keys) < 1000; it.Next() {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
			return nil
		})
		if err != nil || len(keys) == 0 {
			return err
		}
		err = db.Update(func(txn *badger.Txn) error {
			for _, k := range keys {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
}

// maybeSnapshot takes a snapshot when the write crossed a multiple of
// SnapshotEvery.
func (j *BadgerJournal) maybeSnapshot(ctx context.Context, session string, res opResult) {
	if crossesSnapshot(j.opts.SnapshotEvery, res.prevTail, res.tail) {
		takeSnapshot(ctx, j.snaps, j.Snapshot, j.log, session)
	}
}

// snapshotFailed logs a snapshot that could not be written.
func (j *BadgerJournal) snapshotFailed(session string, err error) {
	logSnapshotFailed(j.log, session, err)
}

// Snapshot folds the session's journal and stores the State as its latest
// snapshot, replacing older ones. Appends call it every SnapshotEvery
// events; it is exported for tools and tests. The journal is read and the
// snapshot written in one transaction, which Badger refuses if the
// session's head changes before it commits (an append, or a Delete, which
// a snapshot must not outlive); an append is then waited out by trying
// again, up to three more times.
func (j *BadgerJournal) Snapshot(ctx context.Context, session string) error {
	if err := ValidateSession(session); err != nil {
		return err
	}
	var seq uint64
	update := func(txn *badger.Txn) error {
		st, err := j.loadIn(ctx, txn, session)
		if err != nil {
			return err
		}
		seq = st.Seq
		b, err := encodeSnapshot(st)
		if err != nil {
			return fmt.Errorf("memory: snapshot %s: %w", session, err)
		}
		key := snapshotKey(session, st.Seq)
		o := badger.DefaultIteratorOptions
		o.Prefix = seqPrefix(prefixSnapshot, session)
		o.PrefetchValues = false
		it := txn.NewIterator(o)
		var old [][]byte
		for it.Rewind(); it.Valid(); it.Next() {
			if k := it.Item().Key(); !bytes.Equal(k, key) {
				old = append(old, it.Item().KeyCopy(nil))
			}
		}
		it.Close()
		for _, k := range old {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return txn.Set(key, b)
	}
	var err error
	for attempt := 0; ; attempt++ {
		err = updateTxn(j.db, update)
		if !errors.Is(err, badger.ErrConflict) || attempt == 3 || ctx.Err() != nil {
			break
		}
	}
	var ce *CorruptError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce), errors.Is(err, ErrNotFound):
		return loadErr(session, err)
	}
	return fmt.Errorf("memory: snapshot %s at %d: %w", session, seq, dbErr(err))
}

// updateTxn runs fn in a read-write transaction, turning a panic of Badger
// while it reads into ErrCorruptStore, as view does.
func updateTxn(db *badger.DB, fn func(txn *badger.Txn) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: Badger failed reading it: %s", ErrCorruptStore, firstLine(fmt.Sprint(r)))
		}
	}()
	return db.Update(fn)
}

// latestSnapshotIn returns the newest usable snapshot of the session in txn
// at or before tail, or an empty State when there is none. A snapshot that
// fails its checks is skipped (and logged at warn level, unless it is merely
// of an older format): the journal replays from the beginning, since it is
// the source of truth. Snapshot keeps only the newest snapshot, so a forward
// scan of the session's snapshot keys (cheaper in Badger than a reverse
// seek) reads one key, two while a replacement is being written.
func (j *BadgerJournal) latestSnapshotIn(txn *badger.Txn, session string, tail uint64) *State {
	o := badger.DefaultIteratorOptions
	o.Prefix = seqPrefix(prefixSnapshot, session)
	o.PrefetchValues = false
	it := txn.NewIterator(o)
	defer it.Close()
	st := &State{}
	for it.Rewind(); it.Valid(); it.Next() {
		seq, _ := keySeq(it.Item().Key())
		var snap *State
		err := it.Item().Value(func(v []byte) error {
			snap = usableSnapshot(j.log, session, v, seq, tail)
			return nil
		})
		if err != nil {
			j.log.Warn().Err(err).Str("session", session).Uint64("seq", seq).Msg("skipping damaged snapshot; replaying the journal")
			continue
		}
		if snap != nil && snap.Seq >= st.Seq {
			st = snap
		}
	}
	return st
}
