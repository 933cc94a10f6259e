package knowledge

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/agcore/agcore/memory"
)

// fakeClock is a manual clock: every call to Now advances it by step.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func newFakeClock(step time.Duration) *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), step: step}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// openStore opens an in-memory store closed at the end of the test.
func openStore(t testing.TB) *memory.Store {
	t.Helper()
	st, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return st
}

// newTestBase returns a Base over a fresh in-memory store, with a fake clock
// unless opts sets one.
func newTestBase(t testing.TB, opts Options) *Base {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = newFakeClock(time.Second).Now
	}
	b, err := New(openStore(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newTestRetriever(t testing.TB, b *Base, opts RetrieverOptions) *Retriever {
	t.Helper()
	r, err := NewRetriever(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustCreate(t testing.TB, b *Base, pages ...Page) {
	t.Helper()
	for _, p := range pages {
		if _, err := b.Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
}

// ids lists the ids of the pages in res, in order.
func resultIDs(res Result) []string {
	out := make([]string, 0, len(res.Items))
	for _, it := range res.Items {
		out = append(out, it.Page.ID)
	}
	return out
}

// collect drains a page iterator.
func collect(t testing.TB, seq func(func(Page, error) bool)) []string {
	t.Helper()
	var out []string
	for p, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.ID)
	}
	return out
}

// keysWithPrefix lists the keys under prefix.
func keysWithPrefix(t testing.TB, b *Base, prefix string) []string {
	t.Helper()
	var out []string
	err := b.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			out = append(out, string(it.Item().Key()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// findPosting returns the key of the posting of term in field for page id,
// failing the test when there is none.
func findPosting(t testing.TB, b *Base, term string, field byte, id string) []byte {
	t.Helper()
	prefix := postingPrefix(term, field)
	for _, k := range keysWithPrefix(t, b, string(prefix)) {
		if len(k) == len(prefix)+2+len(id) && k[len(prefix)+2:] == id {
			return []byte(k)
		}
	}
	t.Fatalf("no posting of %q in field %c for page %q", term, field, id)
	return nil
}
