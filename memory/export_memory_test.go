package memory

import (
	"context"
	"slices"
	"weak"
)

// memorySession returns the journal of session in j with its lock held, or
// nil.
func memorySession(j *MemoryJournal, session string) *memSession {
	v, ok := j.sessions.Load(session)
	if !ok {
		return nil
	}
	s := v.(*memSession)
	s.mu.Lock()
	return s
}

// PutMemoryEntry overwrites the stored bytes of entry seq of session in j,
// bypassing every check, so tests can plant corrupt entries. The entries
// are copied, not changed in place, as the journal never changes them.
func PutMemoryEntry(j *MemoryJournal, session string, seq uint64, raw []byte) error {
	s := memorySession(j, session)
	if s == nil {
		return ErrNotFound
	}
	defer s.mu.Unlock()
	if seq == 0 || seq > s.head.Tail {
		return ErrNotFound
	}
	s.entries = slices.Clone(s.entries)
	s.entries[seq-1] = raw
	return nil
}

// MemoryEntry returns the stored bytes of entry seq of session in j.
func MemoryEntry(j *MemoryJournal, session string, seq uint64) ([]byte, error) {
	s := memorySession(j, session)
	if s == nil {
		return nil, ErrNotFound
	}
	defer s.mu.Unlock()
	if seq == 0 || seq > s.head.Tail {
		return nil, ErrNotFound
	}
	return slices.Clone(s.entries[seq-1]), nil
}

// AlterMemorySnapshot rewrites the stored bytes of the session's snapshot
// in j with alter, bypassing every check.
func AlterMemorySnapshot(j *MemoryJournal, session string, alter func([]byte) []byte) error {
	s := memorySession(j, session)
	if s == nil {
		return ErrNotFound
	}
	defer s.mu.Unlock()
	if s.snap == nil {
		return ErrNotFound
	}
	s.snap = alter(slices.Clone(s.snap))
	return nil
}

// MemorySnapshotSeq returns the seq of the session's snapshot in j, 0 when
// it has none.
func MemorySnapshotSeq(j *MemoryJournal, session string) uint64 {
	s := memorySession(j, session)
	if s == nil {
		return 0
	}
	defer s.mu.Unlock()
	return s.snapSeq
}

// MemoryHeld returns how many sessions j holds, and how many entries and
// bytes of entries and snapshots they hold.
func MemoryHeld(j *MemoryJournal) (sessions, entries, bytes int) {
	j.sessions.Range(func(_, v any) bool {
		s := v.(*memSession)
		s.mu.Lock()
		defer s.mu.Unlock()
		sessions++
		entries += len(s.entries)
		for _, e := range s.entries {
			bytes += len(e)
		}
		bytes += len(s.snap)
		return true
	})
	return sessions, entries, bytes
}

// HoldMemoryWrites makes every write of j to session wait, with the
// session's lock held, until release is closed; entered receives a value
// each time one starts waiting. Call it before the first write.
func HoldMemoryWrites(j *MemoryJournal, session string, entered chan<- struct{}, release <-chan struct{}) {
	j.whileLocked = func(id string) {
		if id != session {
			return
		}
		entered <- struct{}{}
		<-release
	}
}

// WrapMemorySnapshotTake replaces how the background snapshotter of j
// takes a snapshot with wrap(take). Call it before the first append.
func WrapMemorySnapshotTake(j *MemoryJournal, wrap func(take func(context.Context, string) error) func(context.Context, string) error) {
	j.snaps.take = wrap(j.snaps.take)
}

// MemorySessionWeak returns a weak pointer to the journal of session in j,
// so tests can check that it is freed.
func MemorySessionWeak(j *MemoryJournal, session string) weak.Pointer[memSession] {
	v, _ := j.sessions.Load(session)
	s, _ := v.(*memSession)
	return weak.Make(s)
}

// BeforeMemorySnapshotKept makes Snapshot of j call f between folding a
// session's journal and keeping the snapshot. Call it before the first
// write.
func BeforeMemorySnapshotKept(j *MemoryJournal, f func(session string)) { j.beforeKeep = f }
