package knowledge

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/dgraph-io/badger/v4"
)

// ImportReport counts what Import did.
type ImportReport struct {
	// Created is the number of new pages written.
	Created int
	// Replaced is the number of existing pages overwritten.
	Replaced int
	// Postings is the number of inverted-index postings written.
	Postings int
	// Evicted is the number of pages the eviction pass after the import
	// deleted (EvictCapacity and EvictRecallBased only).
	Evicted int
}

// Import writes many pages at once, as Upsert would write each of them, but
// through one Badger write batch instead of a transaction per page: it is
// the way to load a corpus (or restore an export), several times faster than
// Upsert in a loop. Writes and queries wait while it runs, since the batch is
// not isolated from them. A page that fails validation stops the import with
// an *InvalidError; the pages before it are written. The eviction policy runs
// once, at the end.
//
// A large import produces many LSM tables at once; a Store opened with a
// larger memory.Options.MemTableSize absorbs it with less compaction.
func (b *Base) Import(ctx context.Context, pages iter.Seq[Page]) (ImportReport, error) {
	var rep ImportReport
	if err := b.importPages(ctx, pages, &rep); err != nil {
		return rep, fmt.Errorf("knowledge: import: %w", err)
	}
	n, err := b.Evict(ctx)
	rep.Evicted = n
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrEviction, err)
	}
	return rep, nil
}

func (b *Base) importPages(ctx context.Context, pages iter.Seq[Page], rep *ImportReport) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	wb := b.db.NewWriteBatch()
	defer wb.Cancel()
	// The existence checks read a snapshot taken before the batch; a page
	// given twice is replaced against the first version, so track those.
	seen := make(map[string]*Page)
	txn := b.db.NewTransaction(false)
	defer txn.Discard()
	n := 0
	for p := range pages {
		if n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		n++
		if err := validatePage(&p); err != nil {
			return errors.Join(err, wb.Flush()) // keep the pages before it
		}
		p.Tags = slices.Clone(p.Tags)
		p.References = slices.Clone(p.References)
		old, ok := seen[p.ID]
		var stats recallStats
		if !ok {
			var err error
			old, _, err = loadPage(txn, p.ID)
			if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
				return err
			}
			if stats, err = loadStats(txn, p.ID); err != nil && !errors.Is(err, ErrCorrupt) {
				return err
			}
		}
		now := b.clock()
		switch {
		case old != nil:
			p.Created = old.Created
			rep.Replaced++
		case p.Created.IsZero():
			p.Created = now
			rep.Created++
		default:
			rep.Created++
		}
		p.Updated = now
		p.AccessCount = stats.recalls
		postings, err := b.batchPage(wb, &p, old, stats)
		if err != nil {
			return fmt.Errorf("page %q: %w", p.ID, err)
		}
		rep.Postings += postings
		stored := p
		seen[p.ID] = &stored
	}
	return wb.Flush()
}

// batchPage writes p, its scoring record, its derived keys and (when it has
// any) its recall statistics into wb, deleting the derived keys of old that
// p no longer has. It returns the number of postings written.
func (b *Base) batchPage(wb *badger.WriteBatch, p, old *Page, stats recallStats) (int, error) {
	expires := b.policy.expiresAt(p.Created)
	raw, err := marshalPage(p)
	if err != nil {
		return 0, err
	}
	if err := setBatch(wb, pageKey(p.ID), raw, expires); err != nil {
		return 0, err
	}
	if stats.recalls > 0 {
		if err := setBatch(wb, statsKey(p.ID), stats.marshal(), expires); err != nil {
			return 0, err
		}
	}
	if old != nil {
		keep := derivedKeys(p, newDocRecord(p).bigrams)
		for k := range derivedKeys(old, newDocRecord(old).bigrams) {
			if _, ok := keep[k]; !ok {
				if err := wb.Delete([]byte(k)); err != nil {
					return 0, err
				}
			}
		}
	}
	return writeDerived(wb, p, expires)
}

func setBatch(wb *badger.WriteBatch, key, value []byte, expires uint64) error {
	e := badger.NewEntry(key, value)
	e.ExpiresAt = expires
	return wb.SetEntry(e)
}
