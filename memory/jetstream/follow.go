package jetstream

// This file holds Follow: a session's entries as they are appended, by
// whichever process appends them.

import (
	"context"
	"errors"
	"fmt"
	"iter"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// Follow yields the session's entries from seq from on (1 when from is
// 0), in order: those stored, then each one as it is appended, by any
// process. It never ends on its own: it ends when the caller stops, or
// when ctx ends, after yielding ctx's error. The entries are checked as
// Read checks them (a gap or an entry stored twice is a
// *memory.CorruptError). It reads through an ordered consumer of the
// session's subject, which the client recreates, from the next record,
// when its server is lost.
func (j *Journal) Follow(ctx context.Context, session string, from uint64) iter.Seq2[memory.Entry, error] {
	return func(yield func(memory.Entry, error) bool) {
		if err := memory.ValidateSession(session); err != nil {
			yield(memory.Entry{}, err)
			return
		}
		if err := ctx.Err(); err != nil {
			yield(memory.Entry{}, err)
			return
		}
		cons, err := j.stream(session).OrderedConsumer(ctx, njs.OrderedConsumerConfig{
			FilterSubjects: []string{j.entrySubject(session)},
			DeliverPolicy:  njs.DeliverAllPolicy,
		})
		if err != nil {
			yield(memory.Entry{}, fmt.Errorf("jetstream: journal follow %s: %w", session, err))
			return
		}
		msgs, err := cons.Messages()
		if err != nil {
			yield(memory.Entry{}, fmt.Errorf("jetstream: journal follow %s: %w", session, err))
			return
		}
		stop := context.AfterFunc(ctx, msgs.Stop)
		defer func() {
			stop()
			msgs.Stop()
		}()
		stopped := false
		f := &folder{session: session, next: 1, skipBelow: max(from, 1), emit: func(env messages.Envelope, ev messages.JournalEvent) (bool, error) {
			if !yield(memory.Entry{Envelope: env, Event: ev}, nil) {
				stopped = true
				return false, nil
			}
			return true, nil
		}}
		for {
			msg, err := msgs.Next()
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				} else if errors.Is(err, njs.ErrMsgIteratorClosed) {
					err = fmt.Errorf("jetstream: journal follow %s: %w", session, err)
				}
				yield(memory.Entry{}, err)
				return
			}
			md, err := msg.Metadata()
			if err != nil {
				yield(memory.Entry{}, fmt.Errorf("jetstream: journal follow %s: %w", session, err))
				return
			}
			more, err := f.record(rawMsg{seq: md.Sequence.Stream, hdr: msg.Headers(), data: msg.Data()})
			if stopped {
				return
			}
			if err != nil || !more {
				yield(memory.Entry{}, err)
				return
			}
		}
	}
}
