package memory

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"
)

// Limits of one group commit.
const (
	maxBatchOps   = 1024
	maxBatchBytes = 4 << 20
	// maxBatchRetries bounds how often a whole batch is retried after a
	// Badger conflict before its operations are committed one by one.
	maxBatchRetries = 8
)

// committer is the group-commit goroutine of a batch journal. Appenders hand
// it operations over an unbuffered channel; each time it is free it takes
// every operation already waiting, runs them in one transaction, commits,
// syncs once, and answers each appender.
type committer struct {
	db    *badger.DB
	syncs *syncer
	log   zerolog.Logger

	reqs     chan commitReq
	quit     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once

	// beforeCommit, when set (by tests, before the first append), runs
	// each time a batch has been taken, before it is committed.
	beforeCommit func()
}

type commitReq struct {
	op   writeOp
	head head // the session's head, which op applies to
	size int
	done chan commitRes // buffered: the committer never blocks on it
}

// commitRes is the outcome of a write. unknown is set with an error after
// which the stored head is unknown (the commit or the sync failed); an
// error without it left the journal as it was.
type commitRes struct {
	res     opResult
	err     error
	unknown bool
}

func newCommitter(db *badger.DB, syncs *syncer, log zerolog.Logger) *committer {
	c := &committer{
		db:      db,
		syncs:   syncs,
		log:     log,
		reqs:    make(chan commitReq),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go c.run()
	return c
}

// stop ends the goroutine after it has answered every operation it took.
// Appenders still waiting to hand one over get ErrClosed. A nil committer
// stops at once.
func (c *committer) stop() error {
	if c == nil {
		return nil
	}
	c.stopOnce.Do(func() { close(c.quit) })
	<-c.stopped
	return nil
}

// hand gives r to the committer, which answers on r.done once r is
// durable or has failed. When hand returns an error (ctx ended, or the
// committer stopped), the committer did not take r and nothing was
// written.
func (c *committer) hand(ctx context.Context, r commitReq) error {
	select {
	case c.reqs <- r:
		return nil
	case <-c.quit:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *committer) run() {
	defer close(c.stopped)
	for {
		select {
		case r := <-c.reqs:
			c.commit(c.collect(r))
		case <-c.quit:
			return
		}
	}
}

// collect gathers first and every operation already waiting, within the
// batch limits.
func (c *committer) collect(first commitReq) []commitReq {
	batch, size := []commitReq{first}, first.size
	for len(batch) < maxBatchOps && size < maxBatchBytes {
		select {
		case r := <-c.reqs:
			batch = append(batch, r)
			size += r.size
		default:
			return batch
		}
	}
	return batch
}

// commit runs the batch in one transaction, syncs, and answers every caller.
func (c *committer) commit(batch []commitReq) {
	if c.beforeCommit != nil {
		c.beforeCommit()
	}
	results := c.runBatch(batch)
	if results == nil {
		results = c.runEach(batch)
	}
	ok := false
	for _, r := range results {
		ok = ok || r.err == nil
	}
	if ok {
		if err := c.syncs.wait(); err != nil {
			err = fmt.Errorf("sync (committed, durability unknown): %w", dbErr(err))
			for i := range results {
				if results[i].err == nil {
					results[i] = commitRes{err: err, unknown: true}
				}
			}
		}
	}
	for i, r := range batch {
		r.done <- results[i]
	}
	c.log.Debug().Int("ops", len(batch)).Msg("group commit")
}

// runBatch runs the batch in one transaction, retrying it whole after a
// conflict. It returns nil when the batch does not fit in one transaction or
// keeps conflicting, so the caller falls back to runEach.
func (c *committer) runBatch(batch []commitReq) []commitRes {
	results := make([]commitRes, len(batch))
	for range maxBatchRetries {
		txn := c.db.NewTransaction(true)
		for i, r := range batch {
			// Each session has at most one operation in a batch (its lock is
			// held until the operation is answered), so no other operation
			// of the batch changes the head it applies to.
			res, err := r.op.apply(txn, r.head)
			if errors.Is(err, badger.ErrTxnTooBig) {
				txn.Discard()
				return nil
			}
			results[i] = commitRes{res: res, err: dbErr(err)}
		}
		err := txn.Commit()
		if errors.Is(err, badger.ErrConflict) {
			continue
		}
		if err != nil {
			for i := range results {
				if results[i].err == nil {
					results[i] = commitRes{err: dbErr(err), unknown: true}
				}
			}
		}
		return results
	}
	return nil
}

// runEach commits every operation of the batch in its own transaction.
func (c *committer) runEach(batch []commitReq) []commitRes {
	results := make([]commitRes, len(batch))
	for i, r := range batch {
		results[i] = runOp(context.Background(), c.db, r.op, r.head)
	}
	return results
}
