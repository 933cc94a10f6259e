package knowledge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
)

func allIDs(t *testing.T, b *Base) []string {
	t.Helper()
	return collect(t, b.List(context.Background(), ""))
}

func TestEviction_None(t *testing.T) {
	b := newTestBase(t, Options{Eviction: Policy{CheckInterval: 1}})
	for i := range 100 {
		mustCreate(t, b, Page{ID: fmt.Sprintf("p%03d", i)})
	}
	if n, err := b.Evict(context.Background()); n != 0 || err != nil {
		t.Errorf("Evict = %d, %v; want 0, nil", n, err)
	}
	if got := len(allIDs(t, b)); got != 100 {
		t.Errorf("%d pages kept, want 100", got)
	}
}

func TestEviction_Capacity(t *testing.T) {
	tests := []struct {
		name     string
		interval int
		write    []string
		want     []string
	}{
		{"interval 1 keeps the newest", 1, []string{"a", "b", "c"}, []string{"b", "c"}},
		{"waits for the interval", 3, []string{"a", "b", "c", "d", "e"}, []string{"b", "c", "d", "e"}},
		{"under capacity", 1, []string{"a", "b"}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBase(t, Options{Eviction: Policy{Kind: EvictCapacity, MaxPages: 2, CheckInterval: tt.interval}})
			for _, id := range tt.write {
				mustCreate(t, b, Page{ID: id, Title: "capacity " + id})
			}
			if diff := cmp.Diff(tt.want, allIDs(t, b)); diff != "" {
				t.Errorf("pages (-want +got):\n%s", diff)
			}
		})
	}

	// Evict on demand; the evicted pages leave no keys behind.
	b := newTestBase(t, Options{Eviction: Policy{Kind: EvictCapacity, MaxPages: 1, CheckInterval: 1000}})
	mustCreate(t, b, Page{ID: "old", Title: "evicted words", Tags: []string{"x"}}, Page{ID: "new", Title: "kept"})
	if n, err := b.Evict(context.Background()); n != 1 || err != nil {
		t.Fatalf("Evict = %d, %v; want 1", n, err)
	}
	if diff := cmp.Diff([]string{"new"}, allIDs(t, b)); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	for _, prefix := range []string{prefixIndex + "evicted", prefixTag + "x/", prefixDoc + "old", prefixCreated} {
		if keys := keysWithPrefix(t, b, prefix); prefix == prefixCreated && len(keys) != 1 || prefix != prefixCreated && len(keys) != 0 {
			t.Errorf("keys under %q after eviction: %q", prefix, keys)
		}
	}
}

func TestEviction_TTL(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	clock := now.Add(-2 * time.Hour)
	b := newTestBase(t, Options{
		Clock:    func() time.Time { return clock },
		Eviction: Policy{Kind: EvictTTL, TTL: time.Hour, CheckInterval: 1},
	})
	mustCreate(t, b, Page{ID: "old", Title: "expired knowledge", Tags: []string{"ttl"}})
	clock = now
	mustCreate(t, b, Page{ID: "fresh", Title: "fresh knowledge", Tags: []string{"ttl"}})

	if _, err := b.Get(ctx, "old"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Get(old) err = %v, want not found (created two TTLs ago)", err)
	}
	if diff := cmp.Diff([]string{"fresh"}, collect(t, b.ListByTag(ctx, "ttl", ""))); diff != "" {
		t.Errorf("ListByTag (-want +got):\n%s", diff)
	}
	r := newTestRetriever(t, b, RetrieverOptions{MinScore: -1})
	res, err := r.Retrieve(ctx, "expired knowledge")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"fresh"}, resultIDs(res)); diff != "" || res.Candidates != 1 {
		t.Errorf("Retrieve (-want +got, %d candidates):\n%s", res.Candidates, diff)
	}
	if keys := keysWithPrefix(t, b, prefixIndex+"expired/"); len(keys) != 0 {
		t.Errorf("postings of the expired page are visible: %q", keys)
	}
	// The fresh page's records expire with it.
	if _, err := b.RecordRecall(ctx, Recall{ID: "fresh", Score: 1}); err != nil {
		t.Fatal(err)
	}
	want := b.policy.expiresAt(now)
	for _, key := range [][]byte{pageKey("fresh"), docKey("fresh"), statsKey("fresh"), tagKey("ttl", "fresh"), findPosting(t, b, "fresh", fieldTitle, "fresh")} {
		err := b.db.View(func(txn *badger.Txn) error {
			item, err := txn.Get(key)
			if err != nil {
				return err
			}
			if item.ExpiresAt() != want {
				t.Errorf("%q expires at %d, want %d", key, item.ExpiresAt(), want)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%q: %v", key, err)
		}
	}
}

func TestPolicy_ExpiresAt(t *testing.T) {
	p := Policy{Kind: EvictTTL, TTL: time.Minute}
	base := time.Unix(1000, 0)
	for _, tt := range []struct {
		created time.Time
		want    uint64
	}{
		{base, 1060},
		{base.Add(time.Millisecond), 1061}, // rounded up
		{time.Unix(-1000, 0), 1},           // never "no expiry"
	} {
		if got := p.expiresAt(tt.created); got != tt.want {
			t.Errorf("expiresAt(%v) = %d, want %d", tt.created, got, tt.want)
		}
	}
	if got := (Policy{Kind: EvictCapacity}).expiresAt(base); got != 0 {
		t.Errorf("non-TTL expiry = %d, want 0", got)
	}
}

func TestEviction_RecallBased(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Hour)
	b := newTestBase(t, Options{
		Clock:    clock.Now,
		Eviction: Policy{Kind: EvictRecallBased, MaxPages: 2, HalfLife: 24 * time.Hour, CheckInterval: 1000},
	})
	mustCreate(t, b,
		Page{ID: "a", Title: "often recalled"},
		Page{ID: "b", Title: "never recalled, older"},
		Page{ID: "c", Title: "never recalled, newer"},
	)
	for range 3 {
		if _, err := b.RecordRecall(ctx, Recall{ID: "a", Score: 0.9}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := b.Evict(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Evict = %d, %v; want 1", n, err)
	}
	if diff := cmp.Diff([]string{"a", "c"}, allIDs(t, b)); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	// A page recalled long ago loses to a new page once its recency fades.
	clock.Advance(30 * 24 * time.Hour)
	mustCreate(t, b, Page{ID: "d", Title: "brand new"})
	if _, err := b.Evict(ctx); err != nil {
		t.Fatal(err)
	}
	if got := allIDs(t, b); !slices.Contains(got, "d") || len(got) != 2 {
		t.Errorf("pages = %v, want d kept among 2", got)
	}
}

func TestRecallValue(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	day := 24 * time.Hour
	tests := []struct {
		name    string
		stats   recallStats
		created time.Time
		want    float64
	}{
		{"new, never recalled", recallStats{}, now, RecallWeightRecency},
		{"one half-life old", recallStats{}, now.Add(-day), RecallWeightRecency / 2},
		{"recalled once at 0.8, now", recallStats{recalls: 1, totalScore: 0.8, lastRecall: now}, now.Add(-10 * day),
			RecallWeightCount*math.Ln2 + RecallWeightScore*0.8 + RecallWeightRecency},
		{"future creation clamps", recallStats{}, now.Add(day), RecallWeightRecency},
	}
	for _, tt := range tests {
		if got := recallValue(tt.stats, tt.created, now, day); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: value = %v, want %v", tt.name, got, tt.want)
		}
	}
}
