package memory

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/agcore/agcore/messages"
)

// PutRawEntry overwrites the stored bytes of journal entry seq of session,
// bypassing every check, so tests can plant corrupt entries.
func PutRawEntry(s *Store, session string, seq uint64, raw []byte) error {
	return s.DB().Update(func(txn *badger.Txn) error { return txn.Set(journalKey(session, seq), raw) })
}

// OpenWithValueThreshold opens a store whose values of at least threshold
// bytes go to Badger's value log, so tests can damage value-log entries.
func OpenWithValueThreshold(opts Options, threshold int64) (*Store, error) {
	return open(opts, func(bo *badger.Options) { bo.ValueThreshold = threshold })
}

// RawEntry returns the stored bytes of journal entry seq of session.
func RawEntry(s *Store, session string, seq uint64) ([]byte, error) {
	var b []byte
	err := s.DB().View(func(txn *badger.Txn) error {
		item, err := txn.Get(journalKey(session, seq))
		if err != nil {
			return err
		}
		b, err = item.ValueCopy(nil)
		return err
	})
	return b, err
}

// RemoveRawEntry deletes journal entry seq of session, bypassing every
// check, so tests can plant gaps.
func RemoveRawEntry(s *Store, session string, seq uint64) error {
	return s.DB().Update(func(txn *badger.Txn) error { return txn.Delete(journalKey(session, seq)) })
}

// AlterSnapshot rewrites the stored bytes of the session's snapshots with
// alter, bypassing every check.
func AlterSnapshot(s *Store, session string, alter func([]byte) []byte) error {
	return s.DB().Update(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.Prefix = seqPrefix(prefixSnapshot, session)
		it := txn.NewIterator(o)
		type kv struct{ k, v []byte }
		var all []kv
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				it.Close()
				return err
			}
			all = append(all, kv{it.Item().KeyCopy(nil), v})
		}
		it.Close()
		if len(all) == 0 {
			return ErrNotFound
		}
		for _, e := range all {
			if err := txn.Set(e.k, alter(e.v)); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetFreeSpace makes the store's disk-space check see free bytes, as if the
// file system had that much space left.
func SetFreeSpace(s *Store, free int64) {
	s.space.mu.Lock()
	defer s.space.mu.Unlock()
	s.space.probe = func(string) (int64, error) { return free, nil }
	s.space.probed = time.Time{}
}

// FreeSpaceReserve returns the free space the store's writes leave.
func FreeSpaceReserve(s *Store) int64 { return s.space.reserve }

// PutSnapshot stores st as the session's snapshot at st.Seq, with a valid
// checksum, bypassing every check.
func PutSnapshot(s *Store, session string, st *State) error {
	b, err := encodeSnapshot(st)
	if err != nil {
		return err
	}
	return s.DB().Update(func(txn *badger.Txn) error { return txn.Set(snapshotKey(session, st.Seq), b) })
}

// RemoveHead deletes the session's head only, as a Delete interrupted after
// its first step would have.
func RemoveHead(s *Store, session string) error {
	sh := s.heads.lock(session)
	defer s.heads.unlock(session, sh)
	sh.forget()
	return s.DB().Update(func(txn *badger.Txn) error { return txn.Delete(headKey(session)) })
}

// QuarantinedEntry returns the stored bytes of entry seq of session as
// Quarantine kept them.
func QuarantinedEntry(s *Store, session string, at time.Time, seq uint64) ([]byte, error) {
	var b []byte
	err := s.DB().View(func(txn *badger.Txn) error {
		item, err := txn.Get(append(quarantinePrefix(session, at), journalKey(session, seq)...))
		if err != nil {
			return err
		}
		b, err = item.ValueCopy(nil)
		return err
	})
	return b, err
}

// WriteUnsealed makes j write version 1 envelopes, plain JSON without a
// checksum, as the journal did before checksums: the baseline of
// BenchmarkChecksums.
func WriteUnsealed(j *BadgerJournal) {
	j.encode = func(env messages.Envelope) ([]byte, error) {
		env.V = 1
		return json.Marshal(env)
	}
}

// HeadReads returns how many session heads the store's journals have read
// from Badger to write.
func HeadReads(s *Store) int64 { return s.heads.reads.Load() }

// SetMaxHeads bounds the heads the store keeps in memory.
func SetMaxHeads(s *Store, n int) {
	s.heads.mu.Lock()
	defer s.heads.mu.Unlock()
	s.heads.max = n
}

// KeptHeads returns how many sessions' heads the store keeps in memory.
func KeptHeads(s *Store) int {
	s.heads.mu.Lock()
	defer s.heads.mu.Unlock()
	return len(s.heads.m)
}

// HeadWaiters returns how many writers hold or wait for the session's lock.
func HeadWaiters(s *Store, session string) int {
	s.heads.mu.Lock()
	defer s.heads.mu.Unlock()
	if sh := s.heads.m[session]; sh != nil {
		return sh.refs
	}
	return 0
}

// HoldCommits makes the batch journal j's committer wait, once it has taken
// a batch and before committing it, until release is closed; entered
// receives a value when it starts waiting, if it has room.
func HoldCommits(j *BadgerJournal, entered chan<- struct{}, release <-chan struct{}) {
	j.batch.beforeCommit = func() {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
	}
}

// SetSync makes the store's journals sync with f instead of DB.Sync. Call
// it before any write.
func SetSync(s *Store, f func() error) {
	s.syncs.mu.Lock()
	defer s.syncs.mu.Unlock()
	s.syncs.sync = f
}

// SyncWaiters returns how many writers wait for a sync to end so that the
// next can start.
func SyncWaiters(s *Store) int {
	s.syncs.mu.Lock()
	defer s.syncs.mu.Unlock()
	return s.syncs.waiting
}

// SyncsStarted returns the number of DB.Sync calls the store has started.
func SyncsStarted(s *Store) uint64 {
	s.syncs.mu.Lock()
	defer s.syncs.mu.Unlock()
	return s.syncs.started
}

// WrapSnapshotTake replaces how the background snapshotter of j takes a
// snapshot with wrap(take). Call it before the first append.
func WrapSnapshotTake(j *BadgerJournal, wrap func(take func(context.Context, string) error) func(context.Context, string) error) {
	j.snaps.take = wrap(j.snaps.take)
}

// HasSnapshot reports whether session has a stored snapshot.
func HasSnapshot(s *Store, session string) bool {
	found := false
	_ = s.DB().View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.Prefix = seqPrefix(prefixSnapshot, session)
		it := txn.NewIterator(o)
		defer it.Close()
		it.Rewind()
		found = it.Valid()
		return nil
	})
	return found
}
