package knowledge

import (
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// RebuildReport counts what Rebuild did.
type RebuildReport struct {
	// Pages is the number of pages indexed.
	Pages int
	// Postings is the number of inverted-index postings written.
	Postings int
	// Removed is the number of index, tag and statistics keys deleted
	// before rebuilding (every derived key, plus the statistics of pages
	// that no longer exist).
	Removed int
	// Corrupt lists the ids of pages that could not be decoded; they are
	// left in place, unindexed, and Get reports them with ErrCorrupt.
	Corrupt []string
}

// derivedPrefixes are the key spaces Rebuild recomputes from the pages.
var derivedPrefixes = [...]string{prefixDoc, prefixCreated, prefixTag, prefixIndex}

// Rebuild reconstructs the scoring records, the creation-order index, the
// tag index and the inverted index from the stored pages, each derived key
// keeping its page's expiry. It repairs an index that drifted from the pages
// (an interrupted process cannot cause that, since every page write is one
// transaction, but a restored backup or a bug can). Writes and queries wait
// while it runs.
func (b *Base) Rebuild(ctx context.Context) (RebuildReport, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var rep RebuildReport
	if err := b.dropDerived(ctx, &rep); err != nil {
		return rep, fmt.Errorf("knowledge: rebuild: %w", err)
	}
	if err := b.reindex(ctx, &rep); err != nil {
		return rep, fmt.Errorf("knowledge: rebuild: %w", err)
	}
	if err := b.db.Update(func(txn *badger.Txn) error { return setFormat(txn) }); err != nil {
		return rep, fmt.Errorf("knowledge: rebuild: %w", err)
	}
	b.log.Info().Int("pages", rep.Pages).Int("postings", rep.Postings).Int("removed", rep.Removed).
		Int("corrupt", len(rep.Corrupt)).Msg("knowledge index rebuilt")
	return rep, nil
}

// dropDerived deletes every derived key and the statistics of missing pages.
func (b *Base) dropDerived(ctx context.Context, rep *RebuildReport) error {
	wb := b.db.NewWriteBatch()
	defer wb.Cancel()
	err := b.db.View(func(txn *badger.Txn) error {
		for _, prefix := range derivedPrefixes {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix)})
			err := deleteAll(ctx, it, wb, rep, nil)
			it.Close()
			if err != nil {
				return err
			}
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixStats)})
		defer it.Close()
		return deleteAll(ctx, it, wb, rep, func(key []byte) (bool, error) {
			_, err := txn.Get(pageKey(string(key[len(prefixStats):])))
			if errors.Is(err, badger.ErrKeyNotFound) {
				return true, nil
			}
			return false, err
		})
	})
	if err != nil {
		return err
	}
	return wb.Flush()
}

// deleteAll deletes the keys the iterator visits (those for which orphan
// says so, when it is not nil).
func deleteAll(ctx context.Context, it *badger.Iterator, wb *badger.WriteBatch, rep *RebuildReport,
	orphan func([]byte) (bool, error)) error {
	for it.Rewind(); it.Valid(); it.Next() {
		if rep.Removed%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		key := it.Item().KeyCopy(nil)
		if orphan != nil {
			ok, err := orphan(key)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		}
		if err := wb.Delete(key); err != nil {
			return err
		}
		rep.Removed++
	}
	return nil
}

// reindex writes the derived keys of every page.
func (b *Base) reindex(ctx context.Context, rep *RebuildReport) error {
	wb := b.db.NewWriteBatch()
	defer wb.Cancel()
	err := b.db.View(func(txn *badger.Txn) error {
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
			p, err := decodePage(item, id)
			if err != nil {
				rep.Corrupt = append(rep.Corrupt, id)
				b.log.Warn().Str("page", id).Err(err).Msg("knowledge rebuild: page skipped")
				continue
			}
			n, err := writeDerived(wb, p, item.ExpiresAt())
			if err != nil {
				return err
			}
			rep.Pages++
			rep.Postings += n
		}
		return nil
	})
	if err != nil {
		return err
	}
	return wb.Flush()
}

// writeDerived writes the scoring record and derived keys of p into wb and
// returns the number of postings.
func writeDerived(wb *badger.WriteBatch, p *Page, expires uint64) (int, error) {
	doc := newDocRecord(p)
	e := badger.NewEntry(docKey(p.ID), doc.marshal())
	e.ExpiresAt = expires
	if err := wb.SetEntry(e); err != nil {
		return 0, err
	}
	postings := 0
	for k, v := range derivedKeys(p, doc.bigrams) {
		e := badger.NewEntry([]byte(k), v)
		e.ExpiresAt = expires
		if err := wb.SetEntry(e); err != nil {
			return postings, err
		}
		if len(k) > len(prefixIndex) && k[:len(prefixIndex)] == prefixIndex {
			postings++
		}
	}
	return postings, nil
}

// checkFormat rebuilds the derived keys when they were written in another
// layout than indexFormat, and records the layout of a new Base.
func (b *Base) checkFormat() error {
	var stored []byte
	hasPages := false
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(formatKey))
		switch {
		case err == nil:
			stored, err = item.ValueCopy(nil)
			if err != nil {
				return err
			}
		case !errors.Is(err, badger.ErrKeyNotFound):
			return err
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixPage)})
		defer it.Close()
		it.Rewind()
		hasPages = it.Valid()
		return nil
	})
	if err != nil {
		return fmt.Errorf("knowledge: read index format: %w", err)
	}
	switch {
	case len(stored) == 1 && stored[0] == indexFormat:
		return nil
	case !hasPages:
		if err := b.db.Update(func(txn *badger.Txn) error { return setFormat(txn) }); err != nil {
			return fmt.Errorf("knowledge: write index format: %w", err)
		}
		return nil
	}
	b.log.Info().Bytes("format", stored).Int("want", indexFormat).Msg("knowledge index format changed; rebuilding")
	// New takes no context: the rebuild runs to completion, once.
	_, err = b.Rebuild(context.Background())
	return err
}

// setFormat records indexFormat as the layout of the derived keys.
func setFormat(txn *badger.Txn) error {
	return txn.Set([]byte(formatKey), []byte{indexFormat})
}
