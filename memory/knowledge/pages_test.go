package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
)

func TestBase_CRUD(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Second)
	b := newTestBase(t, Options{Clock: clock.Now})

	in := Page{ID: "go-actors", Title: "Actors in Go", Summary: "Supervision trees", Content: "Mailboxes and children.",
		Tags: []string{"go", "actors"}, References: []string{"https://example.com"}}
	created, err := b.Create(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if created.Created.IsZero() || !created.Created.Equal(created.Updated) {
		t.Errorf("Create set Created %v Updated %v; want equal non-zero", created.Created, created.Updated)
	}
	got, err := b.Get(ctx, "go-actors")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(created, got); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}

	if _, err := b.Create(ctx, in); !errors.Is(err, ErrExists) {
		t.Errorf("Create duplicate: err = %v, want ErrExists", err)
	}
	if _, err := b.Update(ctx, Page{ID: "missing"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Update missing: err = %v, want memory.ErrNotFound", err)
	}
	if _, err := b.Get(ctx, "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get missing: err = %v, want ErrNotFound", err)
	}

	in.Title = "Actors in Go, revised"
	in.Created = time.Time{}
	updated, err := b.Update(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !updated.Created.Equal(created.Created) || !updated.Updated.After(created.Updated) {
		t.Errorf("Update: Created %v Updated %v; want Created kept (%v) and Updated later", updated.Created, updated.Updated, created.Created)
	}
	if got, _ := b.Get(ctx, "go-actors"); got.Title != in.Title {
		t.Errorf("after Update, Title = %q, want %q", got.Title, in.Title)
	}

	if _, err := b.Upsert(ctx, Page{ID: "new", Title: "Upserted"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Upsert(ctx, Page{ID: "new", Title: "Upserted twice"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Get(ctx, "new"); got.Title != "Upserted twice" {
		t.Errorf("Upsert: Title = %q, want the latest", got.Title)
	}
	if n, err := b.Count(ctx); err != nil || n != 2 {
		t.Errorf("Count = %d, %v; want 2", n, err)
	}

	if err := b.Delete(ctx, "go-actors"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "go-actors"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: err = %v, want ErrNotFound", err)
	}
	if err := b.Delete(ctx, "go-actors"); err != nil {
		t.Errorf("Delete of a missing page: %v, want nil", err)
	}
}

func TestBase_Insert(t *testing.T) {
	ctx := context.Background()
	n := 0
	b := newTestBase(t, Options{IDs: func() string { n++; return fmt.Sprintf("page-%d", n) }})
	p, err := b.Insert(ctx, Page{Title: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "page-1" {
		t.Errorf("Insert id = %q, want page-1", p.ID)
	}
	if _, err := b.Insert(ctx, Page{ID: "x"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Insert with an id: err = %v, want ErrInvalid", err)
	}
	rb := newTestBase(t, Options{})
	p, err = rb.Insert(ctx, Page{Title: "random id"})
	if err != nil || len(p.ID) != 16 {
		t.Errorf("Insert with default ids = %q, %v; want 16 hex digits", p.ID, err)
	}
}

func TestBase_InvalidInput(t *testing.T) {
	ctx := context.Background()
	b := newTestBase(t, Options{})
	tests := []struct {
		name  string
		page  Page
		field string
	}{
		{"empty id", Page{}, "id"},
		{"slash", Page{ID: "a/b"}, "id"},
		{"control", Page{ID: "a\nb"}, "id"},
		{"invalid utf8", Page{ID: "a\xffb"}, "id"},
		{"too long", Page{ID: strings.Repeat("x", MaxIDBytes+1)}, "id"},
		{"empty tag", Page{ID: "ok", Tags: []string{"go", ""}}, "tags[1]"},
		{"tag with slash", Page{ID: "ok", Tags: []string{"a/b"}}, "tags[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, op := range []func(context.Context, Page) (Page, error){b.Create, b.Update, b.Upsert} {
				_, err := op(ctx, tt.page)
				var ie *InvalidError
				if !errors.As(err, &ie) || ie.Field != tt.field || !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want an *InvalidError for %q", err, tt.field)
				}
				if !strings.Contains(err.Error(), tt.field) {
					t.Errorf("error %q does not name %q", err, tt.field)
				}
			}
		})
	}
	if _, err := b.Get(ctx, ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("Get(\"\"): err = %v, want ErrInvalid", err)
	}
	if err := b.Delete(ctx, "a/b"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Delete(a/b): err = %v, want ErrInvalid", err)
	}
}

func TestNew_Invalid(t *testing.T) {
	st := openStore(t)
	tests := []struct {
		name  string
		store *memory.Store
		opts  Options
		field string
	}{
		{"nil store", nil, Options{}, "store"},
		{"ttl without duration", st, Options{Eviction: Policy{Kind: EvictTTL}}, "Eviction.TTL"},
		{"capacity without max", st, Options{Eviction: Policy{Kind: EvictCapacity}}, "Eviction.MaxPages"},
		{"negative interval", st, Options{Eviction: Policy{CheckInterval: -1}}, "Eviction.CheckInterval"},
		{"unknown kind", st, Options{Eviction: Policy{Kind: 42}}, "Eviction.Kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.store, tt.opts)
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Field != tt.field {
				t.Errorf("err = %v, want an *InvalidError for %q", err, tt.field)
			}
		})
	}
}

func TestBase_List(t *testing.T) {
	ctx := context.Background()
	b := newTestBase(t, Options{})
	var want []string
	for i := range 300 { // more than one chunk
		id := fmt.Sprintf("p%03d", 299-i)
		mustCreate(t, b, Page{ID: id, Title: "page " + id})
		want = append(want, id)
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, collect(t, b.List(ctx, ""))); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[151:], collect(t, b.List(ctx, want[150]))); diff != "" {
		t.Errorf("List after %s (-want +got):\n%s", want[150], diff)
	}
	var first []string
	for p, err := range b.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if first = append(first, p.ID); len(first) == 3 {
			break
		}
	}
	if diff := cmp.Diff(want[:3], first); diff != "" {
		t.Errorf("List with break (-want +got):\n%s", diff)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for _, err := range b.List(cctx, "") {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("List with a cancelled context: err = %v", err)
		}
	}
}

func TestBase_ListByTag(t *testing.T) {
	ctx := context.Background()
	b := newTestBase(t, Options{})
	mustCreate(t, b,
		Page{ID: "a", Tags: []string{"go", "actors"}},
		Page{ID: "b", Tags: []string{"rust"}},
		Page{ID: "c", Tags: []string{"go"}},
		Page{ID: "d", Tags: []string{"golang"}}, // a longer tag is not a match
	)
	tests := []struct {
		tag, after string
		want       []string
	}{
		{"go", "", []string{"a", "c"}},
		{"go", "a", []string{"c"}},
		{"actors", "", []string{"a"}},
		{"rust", "", []string{"b"}},
		{"python", "", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, collect(t, b.ListByTag(ctx, tt.tag, tt.after))); diff != "" {
			t.Errorf("ListByTag(%q, %q) (-want +got):\n%s", tt.tag, tt.after, diff)
		}
	}
	// Retagging moves the page between tags.
	if _, err := b.Update(ctx, Page{ID: "c", Tags: []string{"rust"}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a"}, collect(t, b.ListByTag(ctx, "go", ""))); diff != "" {
		t.Errorf("after retag, go (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b", "c"}, collect(t, b.ListByTag(ctx, "rust", ""))); diff != "" {
		t.Errorf("after retag, rust (-want +got):\n%s", diff)
	}
	for _, err := range b.ListByTag(ctx, "", "") {
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("ListByTag(\"\"): err = %v, want ErrInvalid", err)
		}
	}
}

func TestBase_CorruptPage(t *testing.T) {
	ctx := context.Background()
	b := newTestBase(t, Options{})
	mustCreate(t, b, Page{ID: "ok"})
	if err := b.db.Update(func(txn *badger.Txn) error { return txn.Set(pageKey("bad"), []byte("{not json")) }); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "bad"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("Get corrupt: err = %v, want ErrCorrupt naming the page", err)
	}
	var ids []string
	var errs int
	for p, err := range b.List(ctx, "") {
		if err != nil {
			errs++
			continue
		}
		ids = append(ids, p.ID)
	}
	if errs != 1 || !slices.Equal(ids, []string{"ok"}) {
		t.Errorf("List over a corrupt page: ids %v, %d errors; want [ok] and 1 error", ids, errs)
	}
	// A corrupt page can be overwritten and deleted.
	if _, err := b.Upsert(ctx, Page{ID: "bad", Title: "fixed"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "bad"); err != nil {
		t.Fatal(err)
	}
}
