package memory

import (
	"fmt"
	"sync"
)

// syncer shares the store's syncs among the writers waiting for one. A
// writer that has committed needs a sync that starts after its commit:
// when none is running it starts one; when one is running (it may have
// started before the commit) it waits for the next, which one of the
// writers then waiting starts, and which covers all of them. One sync runs
// at a time, so a burst of writers is made durable by two syncs, not one
// each: DB.Sync (an msync of the write-ahead log and the value log) costs
// about the same however much it has to write.
type syncer struct {
	sync func() error // the store's sync: DB.Sync

	mu      sync.Mutex
	cond    sync.Cond // signalled when a sync ends; its L is &mu
	running bool
	started uint64 // syncs started
	done    uint64 // the latest sync that ended
	failed  uint64 // the latest sync that failed (0: none)
	err     error  // its error
	waiting int    // writers waiting for a sync (tests watch it)
}

func newSyncer(sync func() error) *syncer {
	s := &syncer{sync: sync}
	s.cond.L = &s.mu
	return s
}

// wait returns once a sync that started after the call has ended: what
// the caller committed before calling is then durable. It returns the
// error of a failed sync that started after the call (the caller's writes
// may then not be durable).
func (s *syncer) wait() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	target := s.started + 1
	for s.done < target {
		if s.running {
			s.waiting++
			s.cond.Wait()
			s.waiting--
			continue
		}
		s.running = true
		s.started++
		n, sync := s.started, s.sync
		s.mu.Unlock()
		err := callSync(sync)
		s.mu.Lock()
		s.running, s.done = false, n
		if err != nil {
			s.failed, s.err = n, err
		}
		s.cond.Broadcast()
	}
	if s.failed >= target {
		return s.err
	}
	return nil
}

// callSync calls sync, turning a panic into an error: the writers waiting
// for the next sync must not wait for ever.
func callSync(sync func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("memory: sync panicked: %v", r)
		}
	}()
	return sync()
}
