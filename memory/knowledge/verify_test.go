package knowledge

import (
	"context"
	"slices"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

func TestVerifyIndex(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	b, err := New(store, Options{Clock: newFakeClock(1).Now})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, b,
		Page{ID: "a", Title: "supervision trees", Tags: []string{"actors"}},
		Page{ID: "b", Title: "journal durability", Content: "fsync group commit"},
	)
	rep, err := VerifyIndex(ctx, store)
	if err != nil || !rep.Consistent() || rep.Pages != 2 || rep.Expected == 0 {
		t.Fatalf("VerifyIndex of a sound base = %+v, %v", rep, err)
	}
	expected := rep.Expected

	// Drop a posting, add a stray one, and store an undecodable page.
	posting := postingKey("supervision", fieldTitle, postingRank(fieldTitle, newDocRecord(&Page{Title: "supervision trees"}).bigrams), "a")
	err = b.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(posting); err != nil {
			return err
		}
		if err := txn.Delete(posting); err != nil {
			return err
		}
		if err := txn.Set(postingKey("junk", fieldContent, 0, "gone"), nil); err != nil {
			return err
		}
		return txn.Set(pageKey("bad"), []byte("{"))
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = VerifyIndex(ctx, store)
	if err != nil || rep.Consistent() || rep.Missing != 1 || rep.Stale != 1 || !slices.Equal(rep.Corrupt, []string{"bad"}) || rep.Expected != expected {
		t.Fatalf("VerifyIndex of a damaged index = %+v, %v; want 1 missing, 1 stale, page bad corrupt", rep, err)
	}
	if _, err := b.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err = VerifyIndex(ctx, store); err != nil || rep.Missing != 0 || rep.Stale != 0 {
		t.Fatalf("VerifyIndex after Rebuild = %+v, %v", rep, err)
	}
}
