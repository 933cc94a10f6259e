package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agcore/agcore/memory"
)

// SessionMemoryConfig configures a SessionMemory. Conn is required; every
// other zero value is a documented default.
type SessionMemoryConfig struct {
	// Conn is the connection to the NATS servers; the memory never closes
	// it.
	Conn *nats.Conn
	// Bucket is the JetStream key-value bucket. Empty means
	// "AGCORE_SESSION_MEMORY".
	Bucket string
	// Replicas is the bucket's replication factor. Zero means 3 when the
	// connected server belongs to a cluster and 1 otherwise.
	Replicas int
	// Memory keeps the bucket in memory instead of files (tests).
	Memory bool
	// MaxValueBytes is the largest value Set accepts. Zero means 64 KiB.
	MaxValueBytes int
	// SnapshotValueBytes caps each value in Snapshot. Zero means 512.
	SnapshotValueBytes int
	// AttemptTimeout bounds each request to the servers (a read, a write,
	// a listing); one without an answer is tried again. Zero means 2 s.
	AttemptTimeout time.Duration
	// ElectionWait is how long a call keeps trying requests without an
	// answer, as while the bucket's stream elects a new leader, before it
	// returns the last error. Zero means 30 s.
	ElectionWait time.Duration
}

// DefaultBucket is the default session-memory bucket.
const DefaultBucket = "AGCORE_SESSION_MEMORY"

// SessionMemory is the session key-value memory of memory.SessionMemory
// kept in a JetStream key-value bucket, so that every member of a cluster
// sees the same facts for a session. Key "<session>/<key>" is stored as
// "<session>.<key>", each part in unpadded base64url. A Set is acknowledged
// once the bucket's replicas have it. It is safe for concurrent use.
type SessionMemory struct {
	kv    njs.KeyValue
	js    njs.JetStream
	cfg   SessionMemoryConfig
	bsubj string // the bucket's subject prefix, "$KV.<bucket>."
}

// NewSessionMemory opens the bucket, creating it when it does not exist,
// and has its stream answer reads from its leader only (no direct gets, not
// even on a bucket created with them): a Get sees every Set acknowledged
// before it, also right after the leader failed.
func NewSessionMemory(ctx context.Context, cfg SessionMemoryConfig) (*SessionMemory, error) {
	if cfg.Conn == nil {
		return nil, fmt.Errorf("%w: SessionMemoryConfig.Conn is nil", ErrConfig)
	}
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultBucket
	}
	if !streamName.MatchString(cfg.Bucket) {
		return nil, fmt.Errorf("%w: SessionMemoryConfig.Bucket %q: use letters, digits, '-' and '_' only", ErrConfig, cfg.Bucket)
	}
	if cfg.Replicas < 0 || cfg.Replicas > 5 {
		return nil, fmt.Errorf("%w: SessionMemoryConfig.Replicas %d: want 1 to 5 (0 for the default)", ErrConfig, cfg.Replicas)
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
		if cfg.Conn.ConnectedClusterName() != "" {
			cfg.Replicas = 3
		}
	}
	if cfg.MaxValueBytes <= 0 {
		cfg.MaxValueBytes = memory.DefaultMaxValueBytes
	}
	if cfg.SnapshotValueBytes <= 0 {
		cfg.SnapshotValueBytes = memory.DefaultSnapshotValueBytes
	}
	if cfg.AttemptTimeout < 0 || cfg.ElectionWait < 0 {
		return nil, fmt.Errorf("%w: SessionMemoryConfig.AttemptTimeout %v and ElectionWait %v must not be negative", ErrConfig, cfg.AttemptTimeout, cfg.ElectionWait)
	}
	if cfg.AttemptTimeout == 0 {
		cfg.AttemptTimeout = DefaultAttemptTimeout
	}
	if cfg.ElectionWait == 0 {
		cfg.ElectionWait = DefaultElectionWait
	}
	js, err := njs.New(cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	storage := njs.FileStorage
	if cfg.Memory {
		storage = njs.MemoryStorage
	}
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, njs.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, njs.KeyValueConfig{
			Bucket: cfg.Bucket, Description: "agcore session memory", History: 1, Storage: storage, Replicas: cfg.Replicas,
		})
		if errors.Is(err, njs.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, cfg.Bucket)
		}
	}
	if err == nil {
		kv, err = leaderReads(ctx, js, cfg.Bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: session memory bucket %s: %w", cfg.Bucket, err)
	}
	return &SessionMemory{kv: kv, js: js, cfg: cfg, bsubj: "$KV." + cfg.Bucket + "."}, nil
}

// leaderReads makes the bucket's stream answer reads from its leader only,
// and returns the bucket as it then reads. CreateKeyValue allows direct
// gets, which any replica answers, one that has not applied the latest
// write included: a Get right after a Set (after a leader's failure, say)
// could then miss the value the Set stored. The stream's leader has every
// write a Set was acknowledged for.
func leaderReads(ctx context.Context, js njs.JetStream, bucket string) (njs.KeyValue, error) {
	st, err := js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		return nil, err
	}
	if cfg := st.CachedInfo().Config; cfg.AllowDirect {
		cfg.AllowDirect = false
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			return nil, fmt.Errorf("serving reads from the stream's leader: %w", err)
		}
	}
	return js.KeyValue(ctx, bucket)
}

// kvKey returns the bucket key of session's key.
func kvKey(session, key string) (string, error) {
	if err := memory.ValidateSession(session); err != nil {
		return "", err
	}
	if err := validateKey(key); err != nil {
		return "", err
	}
	return encodeID(session) + "." + encodeID(key), nil
}

// validateKey checks a session-memory key as memory.SessionMemory does.
func validateKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w %q: empty", memory.ErrInvalidKey, key)
	case len(key) > memory.MaxSessionKeyLen:
		return fmt.Errorf("%w %.40q...: longer than %d bytes", memory.ErrInvalidKey, key, memory.MaxSessionKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w %q: not UTF-8", memory.ErrInvalidKey, key)
	case strings.ContainsFunc(key, unicode.IsControl):
		return fmt.Errorf("%w %q: holds a control character", memory.ErrInvalidKey, key)
	}
	return nil
}

// Set stores value under key, replacing any previous value.
func (m *SessionMemory) Set(ctx context.Context, session, key, value string) error {
	k, err := kvKey(session, key)
	if err != nil {
		return err
	}
	if len(value) > m.cfg.MaxValueBytes {
		return fmt.Errorf("jetstream: session %s key %q: value of %d bytes exceeds %d", session, key, len(value), m.cfg.MaxValueBytes)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Putting the same value again is harmless, so a put without an
	// answer is tried again.
	err = m.attempts(ctx, func(ctx context.Context) error {
		_, err := m.kv.PutString(ctx, k, value)
		return err
	})
	if err != nil {
		return fmt.Errorf("jetstream: session %s set %q: %w", session, key, err)
	}
	return nil
}

// Get returns the value of key; memory.ErrNotFound when it is not set.
func (m *SessionMemory) Get(ctx context.Context, session, key string) (string, error) {
	k, err := kvKey(session, key)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var e njs.KeyValueEntry
	err = m.attempts(ctx, func(ctx context.Context) error {
		var err error
		e, err = m.kv.Get(ctx, k)
		return err
	})
	if errors.Is(err, njs.ErrKeyNotFound) {
		return "", fmt.Errorf("jetstream: session %s key %q: %w", session, key, memory.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("jetstream: session %s get %q: %w", session, key, err)
	}
	return string(e.Value()), nil
}

// Delete removes key and its history; removing a missing key is not an
// error.
func (m *SessionMemory) Delete(ctx context.Context, session, key string) error {
	k, err := kvKey(session, key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.attempts(ctx, func(ctx context.Context) error { return m.kv.Purge(ctx, k) }); err != nil {
		return fmt.Errorf("jetstream: session %s delete %q: %w", session, key, err)
	}
	return nil
}

// Clear removes every key of the session, and no other session's: it
// purges the bucket's subjects of the session.
func (m *SessionMemory) Clear(ctx context.Context, session string) error {
	if err := memory.ValidateSession(session); err != nil {
		return err
	}
	err := m.attempts(ctx, func(ctx context.Context) error {
		st, err := m.js.Stream(ctx, "KV_"+m.cfg.Bucket)
		if err == nil {
			err = st.Purge(ctx, njs.WithPurgeSubject(m.bsubj+encodeID(session)+".*"))
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("jetstream: session %s clear: %w", session, err)
	}
	return nil
}

// List returns the session's entries sorted by key (byte order).
func (m *SessionMemory) List(ctx context.Context, session string) ([]memory.KV, error) {
	if err := memory.ValidateSession(session); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []memory.KV
	err := m.attempts(ctx, func(ctx context.Context) error {
		var err error
		out, err = m.list(ctx, session)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("jetstream: session %s list: %w", session, err)
	}
	return out, nil
}

// list is one attempt of List: a watcher delivers the session's current
// values, then a nil entry; it ends with ctx.
func (m *SessionMemory) list(ctx context.Context, session string) ([]memory.KV, error) {
	w, err := m.kv.Watch(ctx, encodeID(session)+".*", njs.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop() }()
	var out []memory.KV
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("watcher stopped")
			}
			if e == nil { // every current value has been delivered
				slices.SortFunc(out, func(a, b memory.KV) int { return strings.Compare(a.Key, b.Key) })
				return out, nil
			}
			key, err := decodeID(e.Key())
			if err != nil {
				return nil, err
			}
			out = append(out, memory.KV{Key: key, Value: string(e.Value())})
		}
	}
}

// Snapshot renders the session's entries for a system prompt exactly as
// memory.SessionMemory.Snapshot does: one "key: value" line per key in key
// order inside <session-context>, each value capped at SnapshotValueBytes
// with line breaks written as \n; "" when the session has no entries.
func (m *SessionMemory) Snapshot(ctx context.Context, session string) (string, error) {
	kvs, err := m.List(ctx, session)
	if err != nil {
		return "", err
	}
	return memory.RenderSnapshot(kvs, m.cfg.SnapshotValueBytes), nil
}
