package knowledge

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
)

// pagesOf yields pages in order.
func pagesOf(pages ...Page) func(func(Page) bool) {
	return func(yield func(Page) bool) {
		for _, p := range pages {
			if !yield(p) {
				return
			}
		}
	}
}

func TestBase_Import(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		before  []Page
		pages   []Page
		want    ImportReport
		query   string
		found   []string
		missing []string // terms whose postings must be gone
	}{
		{
			name:  "new pages",
			pages: []Page{{ID: "a", Title: "actor supervision"}, {ID: "b", Title: "journal durability", Tags: []string{"disk"}}},
			want:  ImportReport{Created: 2},
			query: "actor supervision", found: []string{"a"},
		},
		{
			name:    "replaces an existing page and its postings",
			before:  []Page{{ID: "a", Title: "obsolete words", Content: "gamma"}},
			pages:   []Page{{ID: "a", Title: "actor supervision"}},
			want:    ImportReport{Replaced: 1},
			query:   "actor supervision",
			found:   []string{"a"},
			missing: []string{"obsolete", "gamma"},
		},
		{
			name:    "a page given twice keeps the last version",
			pages:   []Page{{ID: "a", Title: "first draft"}, {ID: "a", Title: "actor supervision"}},
			want:    ImportReport{Created: 1, Replaced: 1},
			query:   "actor supervision",
			found:   []string{"a"},
			missing: []string{"draft"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBase(t, Options{})
			mustCreate(t, b, tt.before...)
			rep, err := b.Import(ctx, pagesOf(tt.pages...))
			if err != nil {
				t.Fatal(err)
			}
			rep.Postings = 0
			if diff := cmp.Diff(tt.want, rep); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			r := newTestRetriever(t, b, RetrieverOptions{SkipRecall: true})
			res, err := r.Retrieve(ctx, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.found, resultIDs(res)); diff != "" {
				t.Errorf("Retrieve(%q) (-want +got):\n%s", tt.query, diff)
			}
			for _, term := range tt.missing {
				if keys := keysWithPrefix(t, b, prefixIndex+term+"/"); len(keys) != 0 {
					t.Errorf("postings of %q remain: %q", term, keys)
				}
			}
		})
	}
}

// TestBase_ImportMatchesUpsert checks that Import leaves exactly the keys a
// loop of Upsert leaves.
func TestBase_ImportMatchesUpsert(t *testing.T) {
	ctx := context.Background()
	c := newCorpus(500, 7)
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var pages []Page
	for i := range 50 {
		pages = append(pages, c.page(i, created))
	}
	imported := newTestBase(t, Options{})
	if _, err := imported.Import(ctx, pagesOf(pages...)); err != nil {
		t.Fatal(err)
	}
	upserted := newTestBase(t, Options{})
	for _, p := range pages {
		if _, err := upserted.Upsert(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	dump := func(b *Base) map[string]string {
		out := map[string]string{}
		err := b.db.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(memory.PrefixKnowledge), PrefetchValues: true})
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				v, err := it.Item().ValueCopy(nil)
				if err != nil {
					return err
				}
				out[string(it.Item().Key())] = string(v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// Both bases run the same fake clock from the same start, so even the
	// Updated times agree.
	if diff := cmp.Diff(dump(upserted), dump(imported)); diff != "" {
		t.Errorf("keys (-upsert +import):\n%s", diff)
	}
}

func TestBase_ImportInvalid(t *testing.T) {
	b := newTestBase(t, Options{})
	_, err := b.Import(context.Background(), pagesOf(Page{ID: "ok", Title: "fine"}, Page{ID: "bad/id"}))
	var inv *InvalidError
	if !errors.As(err, &inv) || inv.Field != "id" {
		t.Fatalf("err = %v, want an *InvalidError on id", err)
	}
	if ids := collect(t, b.List(context.Background(), "")); !slices.Equal(ids, []string{"ok"}) {
		t.Errorf("pages = %v, want the page before the invalid one", ids)
	}
}

// TestNew_RebuildsOldFormat checks that a Base whose derived keys were
// written in another layout is rebuilt when opened.
func TestNew_RebuildsOldFormat(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	b, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, b, Page{ID: "p", Title: "durable knowledge"})
	// An older layout: postings without rank or value, no format marker.
	err = b.db.Update(func(txn *badger.Txn) error {
		for _, k := range keysWithPrefix(t, b, prefixIndex) {
			if err := txn.Delete([]byte(k)); err != nil {
				return err
			}
		}
		if err := txn.Set(append(postingPrefix("durable", fieldTitle), 'p'), nil); err != nil {
			return err
		}
		return txn.Delete([]byte(formatKey))
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err = New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := newTestRetriever(t, b, RetrieverOptions{SkipRecall: true}).Retrieve(ctx, "durable knowledge")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"p"}, resultIDs(res)); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
	if keys := keysWithPrefix(t, b, string(postingPrefix("durable", fieldTitle))); len(keys) != 1 || keys[0] == string(postingPrefix("durable", fieldTitle))+"p" {
		t.Errorf("title postings of durable = %q, want the rebuilt one only", keys)
	}
}
