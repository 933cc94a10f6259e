package knowledge

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dgraph-io/badger/v4"
)

// Recall is one page returned by a query, with its score.
type Recall struct {
	// ID is the page id.
	ID string
	// Score is the retrieval score, in [0, 1].
	Score float64
}

// RecordRecall counts that each page in recalls was returned by a query with
// the given score: it increments the page's AccessCount and updates the
// running average score and last recall time that recall-based eviction
// reads. Pages that no longer exist are ignored. It returns the new access
// counts, by page id.
func (b *Base) RecordRecall(ctx context.Context, recalls ...Recall) (map[string]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, r := range recalls {
		if err := validateID("id", r.ID); err != nil {
			return nil, err
		}
	}
	counts := make(map[string]int64, len(recalls))
	b.mu.RLock()
	defer b.mu.RUnlock()
	b.recallMu.Lock()
	defer b.recallMu.Unlock()
	err := b.update(func(txn *badger.Txn) error {
		clear(counts)
		now := b.clock()
		for _, r := range recalls {
			item, err := txn.Get(pageKey(r.ID))
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			s, err := loadStats(txn, r.ID)
			if err != nil {
				return err
			}
			s.recalls++
			if score := r.Score; !math.IsNaN(score) {
				s.totalScore += min(max(score, 0), 1)
			}
			s.lastRecall = now
			if err := setEntry(txn, statsKey(r.ID), s.marshal(), item.ExpiresAt()); err != nil {
				return err
			}
			counts[r.ID] = s.recalls
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("knowledge: record recall: %w", err)
	}
	return counts, nil
}

// loadStats reads the recall statistics of id; a page never recalled has
// zero statistics.
func loadStats(txn *badger.Txn, id string) (recallStats, error) {
	item, err := txn.Get(statsKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return recallStats{}, nil
	}
	if err != nil {
		return recallStats{}, err
	}
	var s recallStats
	err = item.Value(func(v []byte) error {
		var err error
		s, err = unmarshalRecallStats(v)
		return err
	})
	if err != nil {
		return recallStats{}, fmt.Errorf("page %q: %w", id, err)
	}
	return s, nil
}
