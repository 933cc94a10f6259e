package jetstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// rawMsg is a stored message read back: its stream sequence, headers and
// body.
type rawMsg struct {
	seq  uint64
	hdr  nats.Header
	data []byte
}

// directReads is the number of records scan fetches one request each
// before it creates a consumer for the rest: a short journal is read
// faster without one.
const directReads = 8

// scanPage is the number of records a consumer delivers per fetch.
const scanPage = 256

// errTruncated says the subject ended before the stream sequence a scan
// was to reach: it was purged (or lost records) while being read.
var errTruncated = errors.New("jetstream: the subject ended before the expected record")

// scan calls fn with each message of subject in stream st whose sequence
// is in [from, to], in order, until fn returns false or an error. Messages
// appended after to are not read. entries is how many entries the range
// holds, at most: when they are few, the first directReads messages are
// read one request each (a short read is done before a consumer would
// exist); the rest go through a consumer, or one request each again when
// no consumer can be created (the cluster's meta group, which creates
// consumers, may be without a leader while the stream has one).
func (j *Journal) scan(ctx context.Context, st njs.Stream, subject string, from, to, entries uint64, fn func(rawMsg) (bool, error)) error {
	limit := directReads
	if entries > 4*directReads {
		limit = 0
	}
	next, done, err := j.direct(ctx, st, subject, from, to, limit, fn)
	if err != nil || done {
		return err
	}
	err = j.consume(ctx, st, subject, next, to, fn)
	var cs *consumerStopped
	if !errors.As(err, &cs) {
		return err
	}
	j.log.Debug().Err(err).Str("subject", subject).Msg("reading the rest without a consumer")
	_, _, err = j.direct(ctx, st, subject, cs.from, to, -1, fn)
	return err
}

// direct reads at most limit messages (all when limit < 0) of a scan, one
// request each, and returns the next stream sequence to read, and whether
// the scan is done.
func (j *Journal) direct(ctx context.Context, st njs.Stream, subject string, from, to uint64, limit int, fn func(rawMsg) (bool, error)) (next uint64, done bool, err error) {
	next = from
	for n := 0; limit < 0 || n < limit; n++ {
		if next > to {
			return next, true, nil
		}
		if err := ctx.Err(); err != nil {
			return next, true, err
		}
		actx, cancel := context.WithTimeout(ctx, j.cfg.AttemptTimeout)
		m, err := st.GetMsg(actx, next, njs.WithGetMsgSubject(subject))
		cancel()
		if errors.Is(err, njs.ErrMsgNotFound) {
			return next, true, errTruncated
		}
		if err != nil {
			return next, true, fmt.Errorf("read %s at %d: %w", subject, next, err)
		}
		if m.Sequence > to {
			return next, true, errTruncated
		}
		more, err := fn(rawMsg{seq: m.Sequence, hdr: m.Header, data: m.Data})
		if err != nil || !more {
			return next, true, err
		}
		next = m.Sequence + 1
	}
	return next, next > to, nil
}

// consumerStopped says a scan's consumer could not be created, or stopped
// delivering before the end of the scan, at from: the rest is read from the
// stream's leader. A consumer of a replicated stream may live on a
// follower that has not yet applied the last records, and the cluster's
// meta group, which creates consumers, may be without a leader while the
// stream has one.
type consumerStopped struct {
	from uint64
	err  error
}

func (e *consumerStopped) Error() string {
	return fmt.Sprintf("read consumer stopped before %d: %v", e.from, e.err)
}

func (e *consumerStopped) Unwrap() error { return e.err }

// errConsumerBehind says a consumer had delivered everything it holds
// before the end of its scan.
var errConsumerBehind = errors.New("the consumer holds no more records")

// consume reads the rest of a scan through an ephemeral consumer, deleted
// when done (it expires on its own should the delete fail).
func (j *Journal) consume(ctx context.Context, st njs.Stream, subject string, from, to uint64, fn func(rawMsg) (bool, error)) error {
	cctx, cancel := context.WithTimeout(ctx, j.cfg.AttemptTimeout)
	defer cancel()
	cons, err := st.CreateConsumer(cctx, njs.ConsumerConfig{
		FilterSubject:     subject,
		DeliverPolicy:     njs.DeliverByStartSequencePolicy,
		OptStartSeq:       from,
		AckPolicy:         njs.AckNonePolicy,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &consumerStopped{from: from, err: err}
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.cfg.AttemptTimeout)
		defer cancel()
		if err := st.DeleteConsumer(dctx, cons.CachedInfo().Name); err != nil {
			j.log.Debug().Err(err).Str("subject", subject).Msg("read consumer not deleted; it expires in a minute")
		}
	}()
	noResponders := 0
	next := from
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch, err := cons.Fetch(scanPage, njs.FetchMaxWait(j.cfg.AttemptTimeout))
		if err != nil {
			return &consumerStopped{from: next, err: err}
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			md, err := msg.Metadata()
			if err != nil {
				return fmt.Errorf("read %s: %w", subject, err)
			}
			if md.Sequence.Stream > to {
				return errTruncated
			}
			more, err := fn(rawMsg{seq: md.Sequence.Stream, hdr: msg.Headers(), data: msg.Data()})
			if err != nil || !more || md.Sequence.Stream == to {
				return err
			}
			next = md.Sequence.Stream + 1
			if md.NumPending == 0 {
				return &consumerStopped{from: next, err: errConsumerBehind}
			}
		}
		err = batch.Error()
		if errors.Is(err, nats.ErrNoResponders) && got == 0 && noResponders < 5 {
			// A consumer just created on a replicated stream can take a
			// moment to be known across the cluster's routes.
			noResponders++
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(noResponders) * 5 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return &consumerStopped{from: next, err: err}
		}
		if got == 0 {
			return &consumerStopped{from: next, err: fmt.Errorf("no record delivered within %v", j.cfg.AttemptTimeout)}
		}
	}
}
