package memory

import (
	"sync"
	"sync/atomic"
)

// defaultMaxHeads is how many sessions' heads a store keeps in memory. Past
// it, the heads of sessions nobody is writing are dropped, and their next
// write reads the head from Badger again. An entry costs about 100 bytes.
const defaultMaxHeads = 1 << 16

// sessionHeads serialises the writes of each session and keeps each
// session's head (its tail and activation) once a write has read or
// written it, so that the next writes read nothing from Badger.
//
// A journal append is a compare-and-append on the session's head: holding
// the session's lock from taking the head until the write is durable (or
// has failed) makes that comparison safe without Badger's conflict
// detection, whose cost grows with the number of transactions in flight
// (thousands of sessions appending at once). Writes of different sessions
// never wait for each other.
//
// The journals of the store are the only writers of heads (the data
// directory's lock keeps other processes out), and they write a head only
// under its session's lock, so a head kept here is the stored one whenever
// the lock is free. A write whose outcome is unknown (a failed commit or
// sync, or a caller gone while its append was being committed) forgets the
// head, and the next writer reads it again.
type sessionHeads struct {
	mu  sync.Mutex
	m   map[string]*sessionHead
	max int // zero means defaultMaxHeads

	// reads counts the heads read from Badger by writers.
	reads atomic.Int64
}

// sessionHead is one session's write lock and the head it guards.
type sessionHead struct {
	mu   sync.Mutex // held by the session's writer
	refs int        // writers holding or waiting for mu; guarded by sessionHeads.mu

	// Guarded by mu.
	head  head
	known bool // head is the stored head
}

// lock locks session and returns its entry, whose head the caller may read
// and set until it calls unlock.
func (l *sessionHeads) lock(session string) *sessionHead {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]*sessionHead)
	}
	sh := l.m[session]
	if sh == nil {
		sh = &sessionHead{}
		l.m[session] = sh
	}
	sh.refs++
	l.mu.Unlock()
	sh.mu.Lock()
	return sh
}

// unlock unlocks the entry lock returned for session. An entry nobody holds
// or waits for is dropped when its head is not known, and entries of other
// idle sessions are dropped while the store keeps more than its maximum.
func (l *sessionHeads) unlock(session string, sh *sessionHead) {
	known := sh.known
	sh.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if sh.refs--; sh.refs > 0 {
		return
	}
	if !known {
		delete(l.m, session)
		return
	}
	limit := l.max
	if limit == 0 {
		limit = defaultMaxHeads
	}
	for id, other := range l.m {
		if len(l.m) <= limit {
			break
		}
		if other.refs == 0 && id != session {
			delete(l.m, id)
		}
	}
}

// set records h as the stored head.
func (sh *sessionHead) set(h head) { sh.head, sh.known = h, true }

// forget marks the head unknown: the next writer reads it from Badger.
func (sh *sessionHead) forget() { sh.head, sh.known = head{}, false }
