package knowledge

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// PolicyKind selects an eviction policy.
type PolicyKind int

const (
	// EvictNone never evicts (the default: knowledge accumulates).
	EvictNone PolicyKind = iota
	// EvictTTL lets each page expire Policy.TTL after its Created time. The
	// page and every key derived from it are written with that expiry
	// (Badger's own TTL), so they vanish together and Badger reclaims the
	// space during compaction; the Clock sets Created, Badger compares the
	// expiry with the wall clock. A posting that outlives its page anyway
	// (written before a policy change) is skipped by queries and deleted by
	// the query that meets it.
	EvictTTL
	// EvictCapacity keeps the Policy.MaxPages pages with the newest Created
	// time and deletes the others (the oldest first; ties by id).
	EvictCapacity
	// EvictRecallBased keeps Policy.MaxPages pages and deletes those of
	// lowest recall value first:
	//
	//	value = 0.3·ln(1+recalls) + 0.5·averageScore + 0.2·recency
	//	recency = 2^(−age/HalfLife), age = now − last recall (or − Created
	//	when the page was never recalled)
	//
	// recency is 1 for a page recalled just now and halves every HalfLife.
	// Ties go to the older page (by Created, then id).
	EvictRecallBased
)

// Recall-value weights of EvictRecallBased.
const (
	RecallWeightCount   = 0.3
	RecallWeightScore   = 0.5
	RecallWeightRecency = 0.2
)

// Policy configures eviction. The zero Policy never evicts.
//
// Eviction runs after every CheckInterval-th page write (Create, Insert,
// Update, Upsert) and on demand through Base.Evict.
type Policy struct {
	// Kind selects the policy.
	Kind PolicyKind
	// TTL is the life of a page for EvictTTL; it must be positive there.
	TTL time.Duration
	// MaxPages is the number of pages kept by EvictCapacity and
	// EvictRecallBased; it must be positive there.
	MaxPages int
	// HalfLife is the recency half-life of EvictRecallBased. Zero means 7
	// days.
	HalfLife time.Duration
	// CheckInterval is the number of page writes between eviction passes.
	// Zero means 64.
	CheckInterval int
}

// normalized checks p and fills in its defaults.
func (p Policy) normalized() (Policy, error) {
	bad := func(field string, v any, reason string) (Policy, error) {
		return Policy{}, &InvalidError{Field: "Eviction." + field, Value: fmt.Sprint(v), Reason: reason}
	}
	if p.CheckInterval < 0 {
		return bad("CheckInterval", p.CheckInterval, "negative")
	}
	if p.CheckInterval == 0 {
		p.CheckInterval = 64
	}
	switch p.Kind {
	case EvictNone:
	case EvictTTL:
		if p.TTL <= 0 {
			return bad("TTL", p.TTL, "must be positive for EvictTTL")
		}
	case EvictCapacity, EvictRecallBased:
		if p.MaxPages <= 0 {
			return bad("MaxPages", p.MaxPages, "must be positive")
		}
		if p.HalfLife < 0 {
			return bad("HalfLife", p.HalfLife, "negative")
		}
		if p.HalfLife == 0 {
			p.HalfLife = 7 * 24 * time.Hour
		}
	default:
		return bad("Kind", int(p.Kind), "unknown policy")
	}
	return p, nil
}

// expiresAt is the Badger expiry (Unix seconds, 0 for none) of a page
// created at created: Created+TTL, rounded up to the second.
func (p Policy) expiresAt(created time.Time) uint64 {
	if p.Kind != EvictTTL {
		return 0
	}
	at := created.Add(p.TTL)
	sec := at.Unix()
	if at.Nanosecond() > 0 {
		sec++
	}
	return uint64(max(sec, 1))
}

// afterWrite counts a page write and runs an eviction pass every
// CheckInterval writes.
func (b *Base) afterWrite(ctx context.Context) error {
	if b.policy.Kind != EvictCapacity && b.policy.Kind != EvictRecallBased {
		return nil
	}
	if b.writes.Add(1)%int64(b.policy.CheckInterval) != 0 {
		return nil
	}
	if _, err := b.Evict(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrEviction, err)
	}
	return nil
}

// Evict runs an eviction pass now and returns the number of pages deleted.
// EvictNone and EvictTTL delete nothing here (Badger expires TTL pages by
// itself).
func (b *Base) Evict(ctx context.Context) (int, error) {
	var victims []string
	var err error
	switch b.policy.Kind {
	case EvictCapacity:
		victims, err = b.oldestBeyondCapacity(ctx)
	case EvictRecallBased:
		victims, err = b.leastValuable(ctx)
	default:
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("knowledge: evict: %w", err)
	}
	n, err := b.deletePages(ctx, victims)
	if err != nil {
		return n, fmt.Errorf("knowledge: evict: %w", err)
	}
	if n > 0 {
		b.log.Debug().Int("evicted", n).Int("kind", int(b.policy.Kind)).Msg("knowledge pages evicted")
	}
	return n, nil
}

// oldestBeyondCapacity returns the ids of the oldest pages beyond MaxPages.
func (b *Base) oldestBeyondCapacity(ctx context.Context) ([]string, error) {
	n, err := b.Count(ctx)
	if err != nil || n <= b.policy.MaxPages {
		return nil, err
	}
	excess := n - b.policy.MaxPages
	victims := make([]string, 0, excess)
	err = b.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixCreated)})
		defer it.Close()
		for it.Rewind(); it.Valid() && len(victims) < excess; it.Next() {
			if _, id, ok := parseCreatedKey(it.Item().Key()); ok {
				victims = append(victims, id)
			}
		}
		return nil
	})
	return victims, err
}

// leastValuable returns the ids of the lowest-value pages beyond MaxPages.
func (b *Base) leastValuable(ctx context.Context) ([]string, error) {
	type candidate struct {
		id      string
		created time.Time
		value   float64
	}
	var pages []candidate
	err := b.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixCreated)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if len(pages)%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if created, id, ok := parseCreatedKey(it.Item().Key()); ok {
				pages = append(pages, candidate{id: id, created: created})
			}
		}
		if len(pages) <= b.policy.MaxPages {
			return nil
		}
		now := b.clock()
		for i := range pages {
			s, err := loadStats(txn, pages[i].id)
			if err != nil {
				return err
			}
			pages[i].value = recallValue(s, pages[i].created, now, b.policy.HalfLife)
		}
		return nil
	})
	if err != nil || len(pages) <= b.policy.MaxPages {
		return nil, err
	}
	slices.SortFunc(pages, func(x, y candidate) int {
		return cmp.Or(cmp.Compare(x.value, y.value), x.created.Compare(y.created), cmp.Compare(x.id, y.id))
	})
	victims := make([]string, 0, len(pages)-b.policy.MaxPages)
	for _, c := range pages[:len(pages)-b.policy.MaxPages] {
		victims = append(victims, c.id)
	}
	return victims, nil
}

// recallValue is the value of a page for EvictRecallBased.
func recallValue(s recallStats, created, now time.Time, halfLife time.Duration) float64 {
	last := s.lastRecall
	if last.IsZero() {
		last = created
	}
	age := max(now.Sub(last), 0)
	recency := math.Exp2(-float64(age) / float64(halfLife))
	return RecallWeightCount*math.Log1p(float64(s.recalls)) +
		RecallWeightScore*s.avgScore() +
		RecallWeightRecency*recency
}

// deleteBatch is how many pages one eviction transaction deletes.
const deleteBatch = 16

// deletePages deletes the pages ids in batches and returns how many were
// deleted.
func (b *Base) deletePages(ctx context.Context, ids []string) (int, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	done := 0
	for batch := range slices.Chunk(ids, deleteBatch) {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		err := b.update(func(txn *badger.Txn) error {
			for _, id := range batch {
				if err := deletePage(txn, id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return done, err
		}
		done += len(batch)
	}
	return done, nil
}
