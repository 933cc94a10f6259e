package cluster

// This file holds Stream: a turn submitted as Submit does, with its
// journal entries read from the journal the members share as they are
// appended, whichever member appends them.

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// Follower reads the journal the members share; *jetstream.Journal is one.
type Follower interface {
	// Tail returns the seq of the session's last entry.
	Tail(ctx context.Context, session string) (uint64, error)
	// Follow yields the session's entries from seq from on as they are
	// appended, until ctx ends.
	Follow(ctx context.Context, session string, from uint64) iter.Seq2[memory.Entry, error]
}

// Stream runs text as the turn turnID of session, as Submit does, and
// yields the session's journal entries from the call on, in order, as the
// members running the turn append them, up to the turn's TurnCompleted or
// TurnCancelled; then Submit's error, if the turn failed or could not run.
// The entries are read from j, the journal the members share, not
// forwarded by a member: when the session moves to another member, nothing
// is lost, and the move shows as that member's Activated entry before the
// turn's entries go on. Entries of other turns that run meanwhile are
// yielded too. A turn id journaled before the call yields no entries
// (Submit reports how that turn ended). The text the model streams is not
// journaled, so it is not among the entries.
func (m *Member) Stream(ctx context.Context, j Follower, session, turnID, text string) iter.Seq2[memory.Entry, error] {
	return stream(ctx, j, session, turnID, func(ctx context.Context) (*TurnReply, error) {
		return m.Submit(ctx, session, turnID, text)
	})
}

// stream is Stream with the submission as a function.
func stream(ctx context.Context, j Follower, session, turnID string, submit func(context.Context) (*TurnReply, error)) iter.Seq2[memory.Entry, error] {
	return func(yield func(memory.Entry, error) bool) {
		if err := memory.ValidateSession(session); err != nil {
			yield(memory.Entry{}, fmt.Errorf("cluster: stream: %w", err))
			return
		}
		tail, err := j.Tail(ctx, session)
		if err != nil && !errors.Is(err, memory.ErrNotFound) {
			yield(memory.Entry{}, fmt.Errorf("cluster: stream %s: %w", session, err))
			return
		}
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type followed struct {
			e   memory.Entry
			err error
		}
		entries := make(chan followed, 64)
		go func() {
			defer close(entries)
			for e, err := range j.Follow(sctx, session, tail+1) {
				select {
				case entries <- followed{e, err}:
				case <-sctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}()
		type submitted struct {
			reply *TurnReply
			err   error
		}
		done := make(chan submitted, 1)
		go func() {
			r, err := submit(sctx)
			done <- submitted{r, err}
		}()

		turn := -1      // the turn's index, once its UserMessage is seen
		seen := tail    // the seq of the last entry yielded
		var end *uint64 // the tail once Submit ended before the turn was seen
		var subErr error
		subDone := done
		for {
			select {
			case <-ctx.Done():
				yield(memory.Entry{}, ctx.Err())
				return
			case s := <-subDone:
				subDone, subErr = nil, s.err
				var tf *TurnFailedError
				if s.err != nil && !(errors.As(s.err, &tf) && s.reply != nil && s.reply.Result != nil) {
					// The turn did not run: no end entry will come.
					yield(memory.Entry{}, s.err)
					return
				}
				if turn < 0 {
					t, err := j.Tail(ctx, session)
					if err != nil {
						yield(memory.Entry{}, fmt.Errorf("cluster: stream %s: %w", session, err))
						return
					}
					end = &t
					if seen >= t {
						return // the turn was journaled before the call
					}
				}
			case f, ok := <-entries:
				if !ok {
					yield(memory.Entry{}, ctx.Err())
					return
				}
				if f.err != nil {
					yield(memory.Entry{}, fmt.Errorf("cluster: stream %s: %w", session, f.err))
					return
				}
				seen = f.e.Envelope.Seq
				if u, ok := f.e.Event.(messages.UserMessage); ok && turn < 0 && u.TurnID == turnID {
					turn = u.Turn
				}
				if !yield(f.e, nil) {
					return
				}
				if turn >= 0 && ends(f.e.Event, turn) {
					if subDone != nil {
						select {
						case s := <-subDone:
							subErr = s.err
						case <-ctx.Done():
							yield(memory.Entry{}, ctx.Err())
							return
						}
					}
					if subErr != nil {
						yield(memory.Entry{}, subErr)
					}
					return
				}
				if turn < 0 && end != nil && seen >= *end {
					return // the turn was journaled before the call
				}
			}
		}
	}
}

// ends reports whether ev closes turn.
func ends(ev messages.JournalEvent, turn int) bool {
	switch e := ev.(type) {
	case messages.TurnCompleted:
		return e.Turn == turn
	case messages.TurnCancelled:
		return e.Turn == turn
	}
	return false
}
