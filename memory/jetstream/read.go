package jetstream

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// folder walks a session's records in order, checking that their entries
// follow each other, and hands each entry at or after skipBelow to emit.
type folder struct {
	session   string
	next      uint64 // the seq the next entry must have
	skipBelow uint64 // entries before it are passed over undecoded
	// lenient passes over records that end before next (a scan that
	// started before a snapshot's anchor); otherwise they are corrupt.
	lenient bool
	emit    func(messages.Envelope, messages.JournalEvent) (bool, error)
}

// record folds one stored message; it returns false to stop.
func (f *folder) record(m rawMsg) (bool, error) {
	r, rerr := decodeRecord(m.hdr, m.data)
	if rerr != nil && len(r.frames) == 0 && r.first == 0 {
		return false, &memory.CorruptError{Session: f.session, Seq: f.next, Problem: "unreadable record", Err: rerr}
	}
	switch {
	case r.last < f.next && f.lenient:
		return true, nil
	case r.first < f.next && !f.lenient:
		return false, &memory.CorruptError{Session: f.session, Seq: r.first, Problem: fmt.Sprintf("entry stored twice (stream sequence %d)", m.seq)}
	case r.first > f.next:
		return false, f.missing(r.first - 1)
	}
	for i, frame := range r.frames {
		seq := r.first + uint64(i)
		if seq < f.next {
			continue
		}
		if seq >= f.skipBelow {
			env, ev, err := decodeEntry(f.session, seq, frame)
			if err != nil {
				return false, err
			}
			more, err := f.emit(env, ev)
			if err != nil || !more {
				return false, err
			}
		}
		f.next = seq + 1
	}
	if rerr != nil {
		return false, &memory.CorruptError{Session: f.session, Seq: f.next, Problem: "unreadable record", Err: rerr}
	}
	return true, nil
}

// missing reports entry f.next missing, up to tail.
func (f *folder) missing(tail uint64) error {
	return &memory.CorruptError{Session: f.session, Seq: f.next, Problem: fmt.Sprintf("missing entry (the journal goes on to %d)", tail)}
}

// Read implements memory.Journal. It yields the entries up to the tail as
// it was when the iteration started, checking that they follow each other
// from the first without a gap (entries before from are checked for their
// place, not decoded).
func (j *Journal) Read(ctx context.Context, session string, from uint64) iter.Seq2[memory.Entry, error] {
	return func(yield func(memory.Entry, error) bool) {
		if err := memory.ValidateSession(session); err != nil {
			yield(memory.Entry{}, err)
			return
		}
		if err := ctx.Err(); err != nil {
			yield(memory.Entry{}, err)
			return
		}
		h, err := j.fetchHead(ctx, session)
		if err != nil {
			yield(memory.Entry{}, fmt.Errorf("jetstream: journal read %s: %w", session, err))
			return
		}
		from = max(from, 1)
		if h.last < from {
			return
		}
		stopped := false
		f := &folder{session: session, next: 1, skipBelow: from, emit: func(env messages.Envelope, ev messages.JournalEvent) (bool, error) {
			if !yield(memory.Entry{Envelope: env, Event: ev}, nil) {
				stopped = true
				return false, nil
			}
			return true, nil
		}}
		err = j.scan(ctx, j.stream(session), j.entrySubject(session), 1, h.streamSeq, h.last, f.record)
		switch {
		case stopped:
			return
		case errors.Is(err, errTruncated):
			if now, herr := j.fetchHead(ctx, session); herr == nil && (now.last == 0 || now.activation < h.activation || now.last < h.last) {
				return // deleted (and perhaps started again) while read
			}
			err = f.missing(h.last)
		case err == nil && f.next != h.last+1:
			err = f.missing(h.last)
		}
		if err != nil {
			if _, ok := errors.AsType[*memory.CorruptError](err); !ok {
				if _, ok := errors.AsType[*memory.EntryError](err); !ok && ctx.Err() == nil {
					err = &memory.EntryError{Session: session, Seq: f.next, Err: err}
				}
			}
			yield(memory.Entry{}, err)
		}
	}
}

// Load implements memory.Journal: the latest snapshot (if it passes its
// checks) folded with the records after it, up to the session's last
// record as it was when Load began.
func (j *Journal) Load(ctx context.Context, session string) (*memory.State, error) {
	st, _, err := j.load(ctx, session)
	return st, err
}

// load is Load, also returning the stream sequence of the last record
// folded (a snapshot's anchor).
func (j *Journal) load(ctx context.Context, session string) (*memory.State, uint64, error) {
	if err := memory.ValidateSession(session); err != nil {
		return nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	h, err := j.fetchHead(ctx, session)
	if err != nil {
		return nil, 0, fmt.Errorf("jetstream: journal load %s: %w", session, err)
	}
	if h.last == 0 {
		return nil, 0, fmt.Errorf("jetstream: journal load %s: %w", session, memory.ErrNotFound)
	}
	st, anchor := j.latestSnapshot(ctx, session, h)
	f := &folder{session: session, next: st.Seq + 1, skipBelow: st.Seq + 1, lenient: st.Seq > 0,
		emit: func(env messages.Envelope, ev messages.JournalEvent) (bool, error) {
			if err := st.Apply(env, ev); err != nil {
				return false, &memory.EntryError{Session: session, Seq: env.Seq, Err: err}
			}
			return true, nil
		}}
	err = j.scan(ctx, j.stream(session), j.entrySubject(session), anchor+1, h.streamSeq, h.last-st.Seq, f.record)
	switch {
	case errors.Is(err, errTruncated):
		return nil, 0, f.missing(h.last)
	case err != nil:
		if _, ok := errors.AsType[*memory.CorruptError](err); ok {
			return nil, 0, err
		}
		if _, ok := errors.AsType[*memory.EntryError](err); ok {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("jetstream: journal load %s: %w", session, err)
	case f.next != h.last+1:
		return nil, 0, f.missing(h.last)
	}
	return st, h.streamSeq, nil
}
