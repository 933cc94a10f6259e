package jetstream

// This file holds the attempts of the session memory's calls: each request
// to the servers is bounded, and one without an answer (a stream leader
// being elected, a server gone) is tried again for a while.

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// Session memory defaults.
const (
	// DefaultElectionWait is how long a session-memory call keeps trying:
	// longer than a Raft election (4 to 9 s), with room for the
	// reconnection of a client whose server died.
	DefaultElectionWait = 30 * time.Second
	// Pauses between attempts grow from retryPauseMin to retryPauseMax.
	retryPauseMin = 25 * time.Millisecond
	retryPauseMax = 500 * time.Millisecond
)

// attempts runs op with a context bounded by AttemptTimeout until it
// succeeds, fails for a reason that trying again cannot change, ctx ends,
// or ElectionWait has passed since the first attempt; it returns op's last
// error (ctx's error when ctx ended).
func (m *SessionMemory) attempts(ctx context.Context, op func(ctx context.Context) error) error {
	until := time.Now().Add(m.cfg.ElectionWait)
	pause := retryPauseMin
	for {
		actx, cancel := context.WithTimeout(ctx, m.cfg.AttemptTimeout)
		err := op(actx)
		cancel()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case !unanswered(err) || time.Now().After(until):
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		pause = min(2*pause, retryPauseMax)
	}
}

// unanswered reports whether err says that a request got no answer in
// time, which another attempt may get.
func unanswered(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, njs.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrNoStreamResponse) || errors.Is(err, njs.ErrNoHeartbeat)
}
