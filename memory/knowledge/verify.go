package knowledge

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/agcore/agcore/memory"
)

// IndexReport is what VerifyIndex found.
type IndexReport struct {
	// Pages is the number of pages checked.
	Pages int `json:"pages"`
	// Corrupt lists the pages that cannot be decoded.
	Corrupt []string `json:"corrupt,omitempty"`
	// Expected is the number of derived keys (scoring records, creation
	// order, tags, postings) the pages call for.
	Expected int `json:"expected"`
	// Missing counts the derived keys the pages call for that are absent
	// or hold another value.
	Missing int `json:"missing"`
	// Stale counts the derived keys stored that no page calls for (or
	// whose value differs from what its page calls for).
	Stale int `json:"stale"`
}

// Consistent reports whether the index matches the pages exactly and every
// page decodes.
func (r IndexReport) Consistent() bool {
	return len(r.Corrupt) == 0 && r.Missing == 0 && r.Stale == 0
}

// VerifyIndex checks the derived keys of the knowledge pages in store (the
// scoring records, creation-order and tag keys, and the inverted index)
// against the pages, without changing anything: every key a page calls for
// must be stored with its value, and no other derived key may be. Base.Rebuild
// repairs what it finds. It reads one consistent view of the store, so it
// must not race with writers for an exact count.
func VerifyIndex(ctx context.Context, store *memory.Store) (IndexReport, error) {
	var rep IndexReport
	err := store.DB().View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		prefix := []byte(prefixPage)
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			if rep.Pages%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			item := it.Item()
			id := string(item.Key()[len(prefix):])
			rep.Pages++
			p, err := decodePage(item, id)
			if err != nil {
				rep.Corrupt = append(rep.Corrupt, id)
				continue
			}
			doc := newDocRecord(p)
			want := derivedKeys(p, doc.bigrams)
			want[string(docKey(p.ID))] = doc.marshal()
			for k, v := range want {
				rep.Expected++
				if !storedEqual(txn, []byte(k), v) {
					rep.Missing++
				}
			}
		}
		stored := 0
		for _, p := range derivedPrefixes {
			o := badger.DefaultIteratorOptions
			o.Prefix, o.PrefetchValues = []byte(p), false
			it := txn.NewIterator(o)
			for it.Rewind(); it.Valid(); it.Next() {
				stored++
			}
			it.Close()
		}
		rep.Stale = stored - (rep.Expected - rep.Missing)
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("knowledge: verify index: %w", err)
	}
	return rep, nil
}

// storedEqual reports whether key is stored with value.
func storedEqual(txn *badger.Txn, key, value []byte) bool {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) || err != nil {
		return false
	}
	equal := false
	_ = item.Value(func(v []byte) error {
		equal = bytes.Equal(v, value)
		return nil
	})
	return equal
}
