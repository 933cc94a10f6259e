package memory

import "sync"

// sessionLocks serialises the writes of each session. A journal append is a
// compare-and-append on the session's head: holding the session's lock from
// reading the head to committing the write makes that comparison safe
// without Badger's conflict detection, whose cost grows with the number of
// transactions in flight (thousands of sessions appending at once). Writes
// of different sessions never wait for each other.
type sessionLocks struct {
	mu sync.Mutex
	m  map[string]*sessionLock
}

type sessionLock struct {
	mu   sync.Mutex
	refs int
}

// lock locks session and returns the function that unlocks it. The entry
// of a session is dropped when no writer holds or waits for it.
func (l *sessionLocks) lock(session string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]*sessionLock)
	}
	sl := l.m[session]
	if sl == nil {
		sl = &sessionLock{}
		l.m[session] = sl
	}
	sl.refs++
	l.mu.Unlock()
	sl.mu.Lock()
	return func() {
		sl.mu.Unlock()
		l.mu.Lock()
		if sl.refs--; sl.refs == 0 {
			delete(l.m, session)
		}
		l.mu.Unlock()
	}
}
