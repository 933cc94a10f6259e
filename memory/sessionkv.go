package memory

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dgraph-io/badger/v4"
)

// Session-memory limits.
const (
	// MaxSessionKeyLen is the longest key, in bytes.
	MaxSessionKeyLen = 256
	// DefaultMaxValueBytes is the default largest stored value.
	DefaultMaxValueBytes = 64 << 10
	// DefaultSnapshotValueBytes is the default cap of a value in Snapshot.
	DefaultSnapshotValueBytes = 512
)

// ErrInvalidKey is returned for a session-memory key that is empty, longer
// than MaxSessionKeyLen, not UTF-8, or holds a control character.
var ErrInvalidKey = errors.New("memory: invalid session-memory key")

// SessionMemoryOptions configures a SessionMemory. The zero value is valid.
type SessionMemoryOptions struct {
	// MaxValueBytes is the largest value Set accepts. Zero means 64 KiB.
	MaxValueBytes int
	// SnapshotValueBytes caps each value in Snapshot; longer values are cut
	// at a UTF-8 boundary and end with "…". Zero means 512.
	SnapshotValueBytes int
}

// KV is one session-memory entry.
type KV struct {
	Key   string
	Value string
}

// SessionMemory is a key-value store per session, for facts a session keeps
// across its turns and contexts (not its chat history). Keys live under
// m/<session id length, 2 bytes><session id><key>, so one session's keys
// never share a prefix with another's. It is safe for concurrent use.
type SessionMemory struct {
	db    *badger.DB
	space *spaceGuard
	opts  SessionMemoryOptions
}

// NewSessionMemory returns the session memory kept in store.
func NewSessionMemory(store *Store, opts SessionMemoryOptions) *SessionMemory {
	if opts.MaxValueBytes <= 0 {
		opts.MaxValueBytes = DefaultMaxValueBytes
	}
	if opts.SnapshotValueBytes <= 0 {
		opts.SnapshotValueBytes = DefaultSnapshotValueBytes
	}
	return &SessionMemory{db: store.DB(), space: store.space, opts: opts}
}

func sessionPrefix(session string) []byte {
	k := make([]byte, 0, len(prefixSession)+2+len(session))
	k = append(k, prefixSession...)
	k = binary.BigEndian.AppendUint16(k, uint16(len(session)))
	return append(k, session...)
}

func validateKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w %q: empty", ErrInvalidKey, key)
	case len(key) > MaxSessionKeyLen:
		return fmt.Errorf("%w %.40q...: longer than %d bytes", ErrInvalidKey, key, MaxSessionKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w %q: not UTF-8", ErrInvalidKey, key)
	case strings.ContainsFunc(key, unicode.IsControl):
		return fmt.Errorf("%w %q: holds a control character", ErrInvalidKey, key)
	}
	return nil
}

func (m *SessionMemory) key(session, key string) ([]byte, error) {
	if err := ValidateSession(session); err != nil {
		return nil, err
	}
	if err := validateKey(key); err != nil {
		return nil, err
	}
	return append(sessionPrefix(session), key...), nil
}

// Set stores value under key, replacing any previous value.
func (m *SessionMemory) Set(ctx context.Context, session, key, value string) error {
	k, err := m.key(session, key)
	if err != nil {
		return err
	}
	if len(value) > m.opts.MaxValueBytes {
		return fmt.Errorf("memory: session %s key %q: value of %d bytes exceeds %d", session, key, len(value), m.opts.MaxValueBytes)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.space.check(len(k) + len(value)); err != nil {
		return fmt.Errorf("memory: session %s set %q: %w", session, key, err)
	}
	if err := m.db.Update(func(txn *badger.Txn) error { return txn.Set(k, []byte(value)) }); err != nil {
		return fmt.Errorf("memory: session %s set %q: %w", session, key, dbErr(err))
	}
	return nil
}

// Get returns the value of key; ErrNotFound when it is not set.
func (m *SessionMemory) Get(ctx context.Context, session, key string) (string, error) {
	k, err := m.key(session, key)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var v []byte
	err = m.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k)
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return "", fmt.Errorf("memory: session %s key %q: %w", session, key, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("memory: session %s get %q: %w", session, key, dbErr(err))
	}
	return string(v), nil
}

// Delete removes key; removing a missing key is not an error.
func (m *SessionMemory) Delete(ctx context.Context, session, key string) error {
	k, err := m.key(session, key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.db.Update(func(txn *badger.Txn) error { return txn.Delete(k) }); err != nil {
		return fmt.Errorf("memory: session %s delete %q: %w", session, key, dbErr(err))
	}
	return nil
}

// Clear removes every key of the session, and no other session's.
func (m *SessionMemory) Clear(ctx context.Context, session string) error {
	if err := ValidateSession(session); err != nil {
		return err
	}
	if err := deletePrefix(ctx, m.db, sessionPrefix(session)); err != nil {
		return fmt.Errorf("memory: session %s clear: %w", session, dbErr(err))
	}
	return nil
}

// List returns the session's entries sorted by key (byte order).
func (m *SessionMemory) List(ctx context.Context, session string) ([]KV, error) {
	if err := ValidateSession(session); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prefix := sessionPrefix(session)
	var out []KV
	err := m.db.View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.Prefix = prefix
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			out = append(out, KV{Key: string(it.Item().Key()[len(prefix):]), Value: string(v)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memory: session %s list: %w", session, dbErr(err))
	}
	return out, nil
}

// Snapshot renders the session's entries for a system prompt:
//
//	<session-context>
//	key: value
//	</session-context>
//
// one line per key in key order, each value capped at SnapshotValueBytes
// with line breaks written as \n, so a value cannot end the block. It
// returns "" when the session has no entries.
func (m *SessionMemory) Snapshot(ctx context.Context, session string) (string, error) {
	kvs, err := m.List(ctx, session)
	if err != nil {
		return "", err
	}
	return RenderSnapshot(kvs, m.opts.SnapshotValueBytes), nil
}

// RenderSnapshot renders kvs for a system prompt as SessionMemory.Snapshot
// does: one "key: value" line per entry inside <session-context>, each value
// capped at valueLimit bytes (cut at a UTF-8 boundary) with line breaks
// written as \n, so that a value cannot end the block; "" for no entries.
// Other homes of the session memory render their entries with it.
func RenderSnapshot(kvs []KV, valueLimit int) string {
	if len(kvs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<session-context>\n")
	for _, kv := range kvs {
		b.WriteString(kv.Key)
		b.WriteString(": ")
		b.WriteString(snapshotValue(kv.Value, valueLimit))
		b.WriteByte('\n')
	}
	b.WriteString("</session-context>")
	return b.String()
}

// snapshotValue escapes line breaks and caps v at limit bytes, cutting at a
// UTF-8 boundary.
func snapshotValue(v string, limit int) string {
	v = strings.NewReplacer("\\", `\\`, "\r", `\r`, "\n", `\n`).Replace(v)
	if len(v) <= limit {
		return v
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "…"
}
