package memory

import (
	"context"
	"errors"
	"sync"
)

// snapshotQueue bounds the sessions waiting for a background snapshot.
const snapshotQueue = 256

// snapshotter writes a journal's snapshots on a goroutine of its own (see
// JournalOptions.SnapshotInBackground), one at a time, so that the append
// that calls for one does not wait while the session's journal is folded
// and encoded. A session already waiting is not queued twice, and a request
// that finds the queue full is dropped: the next multiple of SnapshotEvery
// asks again, and Load replays more entries meanwhile.
type snapshotter struct {
	take func(ctx context.Context, session string) error
	fail func(session string, err error)

	ctx     context.Context // cancelled by stop
	cancel  context.CancelFunc
	queue   chan string
	stopped chan struct{}

	mu      sync.Mutex
	waiting map[string]struct{}
	closed  bool
}

func newSnapshotter(take func(context.Context, string) error, fail func(string, error)) *snapshotter {
	ctx, cancel := context.WithCancel(context.Background())
	s := &snapshotter{take: take, fail: fail, ctx: ctx, cancel: cancel,
		queue: make(chan string, snapshotQueue), stopped: make(chan struct{}), waiting: map[string]struct{}{}}
	go s.run()
	return s
}

// request queues a snapshot of session, unless one is waiting already, the
// queue is full or the snapshotter has stopped. It never blocks.
func (s *snapshotter) request(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.waiting[session]; ok || s.closed {
		return
	}
	select {
	case s.queue <- session:
		s.waiting[session] = struct{}{}
	default:
	}
}

func (s *snapshotter) run() {
	defer close(s.stopped)
	for {
		select {
		case session := <-s.queue:
			s.mu.Lock()
			delete(s.waiting, session)
			s.mu.Unlock()
			if err := s.take(s.ctx, session); err != nil && !errors.Is(err, ErrNotFound) && s.ctx.Err() == nil {
				s.fail(session, err)
			}
		case <-s.ctx.Done():
			return
		}
	}
}

// stop drops the waiting snapshots, cancels the one being written and
// waits for it. A nil snapshotter stops at once.
func (s *snapshotter) stop() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	<-s.stopped
}
