package jetstream

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// This file reaches past the journal into its streams, as damage or an
// operator would: it rewrites a session's records (purging the subject and
// publishing them again, without their Nats-Msg-Id) to alter one entry.

// storedRecords returns every message on subject, in order.
func storedRecords(ctx context.Context, st njs.Stream, subject string) ([]*njs.RawStreamMsg, error) {
	var out []*njs.RawStreamMsg
	for next := uint64(1); ; {
		m, err := st.GetMsg(ctx, next, njs.WithGetMsgSubject(subject))
		if errors.Is(err, njs.ErrMsgNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		next = m.Sequence + 1
	}
}

// republish replaces the messages of subject with msgs.
func republish(ctx context.Context, js njs.JetStream, st njs.Stream, subject string, msgs []*njs.RawStreamMsg) error {
	if err := st.Purge(ctx, njs.WithPurgeSubject(subject)); err != nil {
		return err
	}
	for _, m := range msgs {
		out := nats.NewMsg(subject)
		for k, v := range m.Header {
			if k != njs.MsgIDHeader && k != njs.ExpectedLastSubjSeqHeader {
				out.Header[k] = v
			}
		}
		out.Data = m.Data
		if _, err := js.PublishMsg(ctx, out); err != nil {
			return err
		}
	}
	return nil
}

// alterEntry rewrites the session's records with alter applied to the
// record holding entry seq; alter gets that record's frames and the index
// of the entry among them.
func (j *Journal) alterEntry(ctx context.Context, session string, seq uint64, alter func(r *record, i int)) error {
	st, subj := j.stream(session), j.entrySubject(session)
	msgs, err := storedRecords(ctx, st, subj)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		r, err := decodeRecord(m.Header, m.Data)
		if err != nil {
			return fmt.Errorf("record at %d: %w", m.Sequence, err)
		}
		if seq < r.first || seq > r.last {
			continue
		}
		alter(&r, int(seq-r.first))
		nm := encodeRecord(subj, r.first, r.activation, r.frames)
		m.Header, m.Data = nm.Header, nm.Data
		return republish(ctx, j.js, st, subj, msgs)
	}
	return fmt.Errorf("no record holds entry %d of %s", seq, session)
}

// corruptEntry replaces the stored bytes of entry seq.
func (j *Journal) corruptEntry(session string, seq uint64, raw []byte) error {
	return j.alterEntry(context.Background(), session, seq, func(r *record, i int) { r.frames[i] = raw })
}

// storedEntry returns the stored bytes of entry seq.
func (j *Journal) storedEntry(session string, seq uint64) ([]byte, error) {
	var out []byte
	err := j.alterEntry(context.Background(), session, seq, func(r *record, i int) { out = append([]byte(nil), r.frames[i]...) })
	return out, err
}

// alterSnapshot rewrites the session's latest snapshot.
func (j *Journal) alterSnapshot(session string, alter func([]byte) []byte) error {
	ctx := context.Background()
	st, subj := j.stream(session), j.snapSubject(session)
	m, err := st.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		return err
	}
	m.Data = alter(m.Data)
	return republish(ctx, j.js, st, subj, []*njs.RawStreamMsg{m})
}
