package memory

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// prefixQuarantine is the key space of quarantined journals:
// q/<session>/<at: 8 bytes big-endian unix nanoseconds>/<original key>.
const prefixQuarantine = "q/"

// Quarantined is a journal moved aside by Quarantine.
type Quarantined struct {
	Session string    `json:"session"`
	At      time.Time `json:"at"`
	// Keys is the number of keys moved: entries, snapshots and the head.
	Keys int `json:"keys"`
}

// quarantineBatch bounds the keys of one transaction of Quarantine.
const quarantineBatch = 500

// Quarantine moves the session's journal (its entries, snapshots and head)
// aside, under the quarantine key space where nothing reads it, stamped
// with at, and returns the number of keys moved. Nothing is deleted: every
// stored byte stays in the store, and in its backups, for inspection. The
// session id is free afterwards; a later Activate starts an empty journal.
// The copies are written before the originals are removed, the head first,
// so an interrupted Quarantine leaves the journal in place (and a partial
// copy, which a second Quarantine makes whole). It must not race with a
// runtime using the session.
func (j *BadgerJournal) Quarantine(ctx context.Context, session string, at time.Time) (int, error) {
	if err := ValidateSession(session); err != nil {
		return 0, err
	}
	if j.store.isClosed() {
		return 0, ErrClosed
	}
	sh := j.store.heads.lock(session)
	defer j.store.heads.unlock(session, sh)
	defer sh.forget()
	stamp := quarantinePrefix(session, at)
	keys := [][]byte{headKey(session)}
	err := view(j.db, func(txn *badger.Txn) error {
		for _, prefix := range [][]byte{seqPrefix(prefixSnapshot, session), seqPrefix(prefixJournal, session)} {
			o := badger.DefaultIteratorOptions
			o.Prefix, o.PrefetchValues = prefix, false
			it := txn.NewIterator(o)
			for it.Rewind(); it.Valid(); it.Next() {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
			it.Close()
		}
		return nil
	})
	moved := 0
	for start := 0; err == nil && start < len(keys); start += quarantineBatch {
		if err = ctx.Err(); err != nil {
			break
		}
		batch := keys[start:min(start+quarantineBatch, len(keys))]
		err = j.db.Update(func(txn *badger.Txn) error {
			for _, k := range batch {
				item, err := txn.Get(k)
				if errors.Is(err, badger.ErrKeyNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				if err := txn.Set(append(bytes.Clone(stamp), k...), v); err != nil {
					return err
				}
				moved++
			}
			return nil
		})
	}
	for start := 0; err == nil && start < len(keys); start += quarantineBatch {
		batch := keys[start:min(start+quarantineBatch, len(keys))]
		err = j.db.Update(func(txn *badger.Txn) error {
			for _, k := range batch {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err == nil && j.opts.Durability != DurabilityNone {
		err = j.db.Sync()
	}
	if err != nil {
		return 0, fmt.Errorf("memory: quarantine %s: %w", session, dbErr(err))
	}
	j.log.Warn().Str("session", session).Int("keys", moved).Msg("journal quarantined")
	return moved, nil
}

// quarantinePrefix is the key prefix of the session's journal quarantined
// at at.
func quarantinePrefix(session string, at time.Time) []byte {
	k := make([]byte, 0, len(prefixQuarantine)+len(session)+10)
	k = append(k, prefixQuarantine...)
	k = append(k, session...)
	k = append(k, '/')
	k = binary.BigEndian.AppendUint64(k, uint64(at.UnixNano()))
	return append(k, '/')
}

// Quarantined yields the journals Quarantine moved aside, by session id and
// time.
func (j *BadgerJournal) Quarantined(ctx context.Context) iter.Seq2[Quarantined, error] {
	return func(yield func(Quarantined, error) bool) {
		var out []Quarantined
		err := view(j.db, func(txn *badger.Txn) error {
			o := badger.DefaultIteratorOptions
			o.Prefix, o.PrefetchValues = []byte(prefixQuarantine), false
			it := txn.NewIterator(o)
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				if err := ctx.Err(); err != nil {
					return err
				}
				rest := it.Item().Key()[len(prefixQuarantine):]
				slash := bytes.IndexByte(rest, '/')
				if slash < 0 || len(rest) < slash+10 {
					continue
				}
				session := string(rest[:slash])
				at := time.Unix(0, int64(binary.BigEndian.Uint64(rest[slash+1:slash+9]))).UTC()
				if n := len(out); n > 0 && out[n-1].Session == session && out[n-1].At.Equal(at) {
					out[n-1].Keys++
					continue
				}
				out = append(out, Quarantined{Session: session, At: at, Keys: 1})
			}
			return nil
		})
		if err != nil {
			yield(Quarantined{}, fmt.Errorf("memory: list quarantined journals: %w", dbErr(err)))
			return
		}
		for _, q := range out {
			if !yield(q, nil) {
				return
			}
		}
	}
}
