package jetstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// Journal is a memory.Journal kept in NATS JetStream streams. It is safe for
// concurrent use, and several processes may share the same streams: every
// write is a compare-and-append checked by the servers.
type Journal struct {
	cfg     Config
	js      njs.JetStream
	streams []njs.Stream
	heads   heads
	log     zerolog.Logger
}

var _ memory.Journal = (*Journal)(nil)

// metaStreams is the stream metadata key that records Config.Streams.
const metaStreams = "agcore.journal.streams"

// New returns a journal on cfg.Conn, creating its streams when they do not
// exist. Streams that exist must have been created for the same number of
// streams and the same storage (the durability mode); New fails naming the
// field otherwise. The journal holds no resources of its own: dropping it
// is enough, and the connection stays the caller's.
func New(ctx context.Context, cfg Config) (*Journal, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	js, err := njs.New(cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	j := &Journal{cfg: cfg, js: js, log: cfg.Options.Logger.With().Str("component", "journal").Str("backend", "nats").Logger()}
	for i := range cfg.Streams {
		st, err := j.ensureStream(ctx, i)
		if err != nil {
			return nil, err
		}
		j.streams = append(j.streams, st)
	}
	return j, nil
}

// streamConfig is the configuration of stream i.
func (j *Journal) streamConfig(i int) njs.StreamConfig {
	storage := njs.FileStorage
	if j.cfg.Options.Durability == memory.DurabilityNone {
		storage = njs.MemoryStorage
	}
	return njs.StreamConfig{
		Name:        fmt.Sprintf("%s_%d", j.cfg.Stream, i),
		Description: "agcore session journal",
		Subjects: []string{
			fmt.Sprintf("%s.%d.e.*", j.cfg.Subject, i),
			fmt.Sprintf("%s.%d.s.*", j.cfg.Subject, i),
		},
		Retention:  njs.LimitsPolicy,
		MaxMsgs:    -1,
		MaxBytes:   -1,
		MaxAge:     0,
		Discard:    njs.DiscardNew,
		Storage:    storage,
		Replicas:   j.cfg.Replicas,
		Duplicates: j.cfg.Duplicates,
		// Entries are never removed one by one; Delete purges a
		// session's subjects.
		DenyDelete: true,
		Metadata:   map[string]string{metaStreams: strconv.Itoa(j.cfg.Streams)},
	}
}

// ensureStream opens stream i, creating it when missing, and checks that an
// existing one was made for the same layout.
func (j *Journal) ensureStream(ctx context.Context, i int) (njs.Stream, error) {
	want := j.streamConfig(i)
	st, err := j.js.Stream(ctx, want.Name)
	if errors.Is(err, njs.ErrStreamNotFound) {
		st, err = j.js.CreateStream(ctx, want)
		if errors.Is(err, njs.ErrStreamNameAlreadyInUse) {
			st, err = j.js.Stream(ctx, want.Name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: stream %s: %w", want.Name, err)
	}
	have := st.CachedInfo().Config
	switch {
	case have.Metadata[metaStreams] != want.Metadata[metaStreams]:
		return nil, fmt.Errorf("%w: Streams %d, but stream %s was created for %q streams: sessions would be looked for in the wrong stream",
			ErrConfig, j.cfg.Streams, want.Name, have.Metadata[metaStreams])
	case have.Storage != want.Storage:
		return nil, fmt.Errorf("%w: Options.Durability %s needs %s storage, but stream %s has %s storage",
			ErrConfig, j.cfg.Options.Durability, want.Storage, want.Name, have.Storage)
	case !slices.Equal(have.Subjects, want.Subjects):
		return nil, fmt.Errorf("%w: Subject %q, but stream %s holds subjects %v", ErrConfig, j.cfg.Subject, want.Name, have.Subjects)
	}
	return st, nil
}

// stream returns the stream that holds session.
func (j *Journal) stream(session string) njs.Stream { return j.streams[j.shard(session)] }

// Durability returns the journal's durability mode.
func (j *Journal) Durability() memory.Durability { return j.cfg.Options.Durability }

// fetchHead reads the session's last record from the stream's leader and
// remembers it.
func (j *Journal) fetchHead(ctx context.Context, session string) (head, error) {
	actx, cancel := context.WithTimeout(ctx, j.cfg.AttemptTimeout)
	defer cancel()
	m, err := j.stream(session).GetLastMsgForSubject(actx, j.entrySubject(session))
	if errors.Is(err, njs.ErrMsgNotFound) {
		j.heads.set(session, head{})
		return head{}, nil
	}
	if err != nil {
		return head{}, err
	}
	_, last, act, err := decodeHeader(m.Header)
	if err != nil {
		return head{}, &memory.CorruptError{Session: session, Problem: "unreadable last record", Err: err}
	}
	h := head{last: last, activation: act, streamSeq: m.Sequence, msgID: m.Header.Get(njs.MsgIDHeader)}
	j.heads.set(session, h)
	return h, nil
}

// cachedHead returns the head the journal remembers, or reads it; cached
// says which.
func (j *Journal) cachedHead(ctx context.Context, session string) (h head, cached bool, err error) {
	if h, ok := j.heads.get(session); ok {
		return h, true, nil
	}
	h, err = j.fetchHead(ctx, session)
	return h, false, err
}

// newMsgID returns the Nats-Msg-Id of a record: the session, the
// activation that writes it, its first seq and a random nonce. The servers
// take two records with the same id for one; the nonce keeps apart two
// writers that share an activation number (0: writers that do not fence,
// or the first activation of a journal deleted and started again).
func newMsgID(session string, activation, first uint64) string {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand)
	return fmt.Sprintf("%s:%d:%d:%s", encodeID(session), activation, first, hex.EncodeToString(nonce[:]))
}

// Activate implements memory.Journal: it appends messages.Activated with
// the next activation number on top of the session's last record, with the
// same compare-and-append as Append, so that every older activation's next
// append is refused.
func (j *Journal) Activate(ctx context.Context, session, node string) (activation, tail uint64, err error) {
	if err := memory.ValidateSession(session); err != nil {
		return 0, 0, err
	}
	at := j.cfg.Options.Clock()
	h, _, err := j.cachedHead(ctx, session)
	for err == nil {
		next := h.activation + 1
		var env messages.Envelope
		if env, err = messages.NewEnvelope(h.last+1, at, messages.Activated{Activation: next, Node: node}); err != nil {
			break
		}
		var b []byte
		if b, err = env.EncodeTrusted(); err != nil {
			break
		}
		m := encodeRecord(j.entrySubject(session), h.last+1, next, [][]byte{b})
		id := newMsgID(session, next, h.last+1)
		m.Header.Set(njs.MsgIDHeader, id)
		var seq uint64
		var uncertain bool
		seq, uncertain, err = j.publish(ctx, m, h.streamSeq)
		if errors.Is(err, errWrongLast) {
			if h, err = j.fetchHead(ctx, session); err == nil && uncertain && h.msgID == id {
				return h.activation, h.last, nil // stored by an unanswered attempt
			}
			continue
		}
		if err != nil {
			break
		}
		nh := head{last: h.last + 1, activation: next, streamSeq: seq, msgID: id}
		j.heads.set(session, nh)
		j.maybeSnapshot(ctx, session, h.last, nh.last)
		return next, nh.last, nil
	}
	if errors.Is(err, memory.ErrOutcomeUnknown) {
		j.heads.forget(session)
	}
	return 0, 0, fmt.Errorf("jetstream: journal activate %s: %w", session, err)
}

// encodeEvents validates events and turns them into envelopes without
// their seq, masking credentials as the Badger journal does.
func (j *Journal) encodeEvents(session string, at time.Time, events []messages.JournalEvent) ([]messages.Envelope, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("jetstream: journal append %s: %w: no events", session, memory.ErrInvalidEvent)
	}
	envs := make([]messages.Envelope, len(events))
	size := 0
	for i, ev := range events {
		if err := memory.ValidateEvent(ev); err != nil {
			return nil, fmt.Errorf("jetstream: journal append %s event %d: %w", session, i, err)
		}
		env, err := messages.NewEnvelope(0, at, ev)
		if err != nil {
			return nil, fmt.Errorf("jetstream: journal append %s event %d: %w", session, i, err)
		}
		if masked := j.cfg.Options.Redactor.ContentJSON(env.Data); string(masked) != string(env.Data) {
			if !json.Valid(masked) {
				return nil, fmt.Errorf("jetstream: journal append %s event %d: %w: masking credentials left invalid JSON", session, i, memory.ErrInvalidEvent)
			}
			env.Data = masked
		}
		envs[i] = env
		size += len(env.Data) + 128
	}
	if size > memory.MaxAppendBytes {
		return nil, fmt.Errorf("jetstream: journal append %s: %w: %d bytes (max %d)", session, memory.ErrTooLarge, size, memory.MaxAppendBytes)
	}
	return envs, nil
}

// Append implements memory.Journal. The events become one record, stored
// only if the session's last record is still the one the writer knows: the
// servers check it (Nats-Expected-Last-Subject-Sequence), so a writer whose
// activation was superseded, or who lost a race, stores nothing. The
// refusal is then classified on the session's head read from the servers:
// memory.ErrFenced when activation is non-zero and no longer the current
// one (checked first), memory.ErrConflict when the tail is not expectTail.
// A fenced append is never retried.
func (j *Journal) Append(ctx context.Context, session string, activation, expectTail uint64, events ...messages.JournalEvent) (uint64, error) {
	if err := memory.ValidateSession(session); err != nil {
		return 0, err
	}
	envs, err := j.encodeEvents(session, j.cfg.Options.Clock(), events)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	h, cached, err := j.cachedHead(ctx, session)
	if err != nil {
		return 0, fmt.Errorf("jetstream: journal append %s after %d: %w", session, expectTail, err)
	}
	id := ""
	uncertain := false
	for {
		if refusal := refuse(h, activation, expectTail); refusal != nil {
			if cached {
				if h, err = j.fetchHead(ctx, session); err != nil {
					break
				}
				cached = false
				continue
			}
			var last uint64
			if last, err = settle(h, refusal, uncertain, id); err == nil {
				return last, nil
			}
			break
		}
		raw := make([][]byte, len(envs))
		for i, env := range envs {
			env.Seq = h.last + 1 + uint64(i)
			if raw[i], err = env.EncodeTrusted(); err != nil {
				return 0, fmt.Errorf("jetstream: journal append %s: %w", session, err)
			}
		}
		m := encodeRecord(j.entrySubject(session), h.last+1, h.activation, raw)
		id = newMsgID(session, h.activation, h.last+1)
		m.Header.Set(njs.MsgIDHeader, id)
		var seq uint64
		var unsure bool
		seq, unsure, err = j.publish(ctx, m, h.streamSeq)
		uncertain = uncertain || unsure
		if errors.Is(err, errWrongLast) {
			if h, err = j.fetchHead(ctx, session); err != nil {
				break
			}
			cached = false
			continue
		}
		if err != nil {
			break
		}
		nh := head{last: h.last + uint64(len(envs)), activation: h.activation, streamSeq: seq, msgID: id}
		j.heads.set(session, nh)
		j.maybeSnapshot(ctx, session, h.last, nh.last)
		return nh.last, nil
	}
	if uncertain || errors.Is(err, memory.ErrOutcomeUnknown) {
		j.heads.forget(session)
	}
	return 0, fmt.Errorf("jetstream: journal append %s after %d: %w", session, expectTail, err)
}

// refuse returns why an append with activation after expectTail cannot go
// on top of h, or nil.
func refuse(h head, activation, expectTail uint64) error {
	if activation != 0 && activation != h.activation {
		return fmt.Errorf("%w: activation %d, current %d", memory.ErrFenced, activation, h.activation)
	}
	if h.last != expectTail {
		return fmt.Errorf("%w: expected tail %d, tail is %d", memory.ErrConflict, expectTail, h.last)
	}
	return nil
}

// settle decides an append the servers refused, on the session's head h
// read from the stream's leader. When an earlier attempt of the append was
// left unanswered and h is that attempt's record, the append was stored:
// the servers of an R1 stream check the expected sequence before the
// Nats-Msg-Id, so a resend of a stored record is refused rather than
// recognised. Otherwise the refusal stands, wrapped in
// memory.ErrOutcomeUnknown when an earlier attempt may have been stored
// under another record.
func settle(h head, refusal error, uncertain bool, id string) (uint64, error) {
	switch {
	case uncertain && id != "" && h.msgID == id:
		return h.last, nil
	case uncertain:
		return 0, fmt.Errorf("%w: %w", memory.ErrOutcomeUnknown, refusal)
	}
	return 0, refusal
}

// Tail implements memory.Journal. It reads the session's last record from
// the stream's leader.
func (j *Journal) Tail(ctx context.Context, session string) (uint64, error) {
	if err := memory.ValidateSession(session); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	h, err := j.fetchHead(ctx, session)
	if err != nil {
		return 0, fmt.Errorf("jetstream: journal tail %s: %w", session, err)
	}
	return h.last, nil
}

// Sessions implements memory.Journal. It asks each stream for its entry
// subjects, so it holds every session id in memory before yielding them in
// byte order.
func (j *Journal) Sessions(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var ids []string
		for i, st := range j.streams {
			if err := ctx.Err(); err != nil {
				yield("", err)
				return
			}
			info, err := st.Info(ctx, njs.WithSubjectFilter(fmt.Sprintf("%s.%d.e.*", j.cfg.Subject, i)))
			if err != nil {
				yield("", fmt.Errorf("jetstream: journal sessions: stream %s: %w", st.CachedInfo().Config.Name, err))
				return
			}
			for subj, n := range info.State.Subjects {
				if n == 0 {
					continue
				}
				id, err := decodeID(subj)
				if err != nil {
					yield("", fmt.Errorf("jetstream: journal sessions: %w", err))
					return
				}
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			if !yield(id, nil) {
				return
			}
		}
	}
}

// Delete implements memory.Journal: it purges the session's snapshots,
// then its entries. It must not race with writers of the session.
func (j *Journal) Delete(ctx context.Context, session string) error {
	if err := memory.ValidateSession(session); err != nil {
		return err
	}
	defer j.heads.forget(session)
	st := j.stream(session)
	for _, subj := range []string{j.snapSubject(session), j.entrySubject(session)} {
		if err := st.Purge(ctx, njs.WithPurgeSubject(subj)); err != nil {
			return fmt.Errorf("jetstream: journal delete %s: purge %s: %w", session, subj, err)
		}
	}
	return nil
}
