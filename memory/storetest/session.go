package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
)

// SessionMemory is the session key-value memory under test
// (*memory.SessionMemory satisfies it).
type SessionMemory interface {
	Set(ctx context.Context, session, key, value string) error
	Get(ctx context.Context, session, key string) (string, error)
	Delete(ctx context.Context, session, key string) error
	Clear(ctx context.Context, session string) error
	List(ctx context.Context, session string) ([]memory.KV, error)
	Snapshot(ctx context.Context, session string) (string, error)
}

// SessionMemorySetup returns a fresh, empty session memory whose snapshot
// caps values at snapshotValueBytes. It releases the backend with t.Cleanup.
type SessionMemorySetup func(t *testing.T, snapshotValueBytes int) SessionMemory

func kv(k, v string) memory.KV { return memory.KV{Key: k, Value: v} }

// RunSessionMemoryTests runs the session-memory conformance suite.
func RunSessionMemoryTests(t *testing.T, setup SessionMemorySetup) {
	t.Run("SetGetDelete", func(t *testing.T) {
		m := setup(t, 0)
		ctx := t.Context()
		if _, err := m.Get(ctx, "s", "k"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("Get(missing) error = %v, want ErrNotFound", err)
		}
		for _, v := range []string{"v1", "v2", ""} {
			if err := m.Set(ctx, "s", "k", v); err != nil {
				t.Fatal(err)
			}
			if got, err := m.Get(ctx, "s", "k"); err != nil || got != v {
				t.Errorf("Get after Set(%q) = %q, %v", v, got, err)
			}
		}
		if err := m.Delete(ctx, "s", "k"); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Get(ctx, "s", "k"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("Get after Delete error = %v, want ErrNotFound", err)
		}
		if err := m.Delete(ctx, "s", "k"); err != nil {
			t.Errorf("Delete(missing) = %v, want nil", err)
		}
	})

	t.Run("ListSorted", func(t *testing.T) {
		m := setup(t, 0)
		ctx := t.Context()
		for _, k := range []string{"lang", "design", "b/c", "a b", "中"} {
			if err := m.Set(ctx, "s", k, "v-"+k); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Set(ctx, "s", "design", "PostgreSQL"); err != nil { // overwrite keeps the key's place
			t.Fatal(err)
		}
		got, err := m.List(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		want := []memory.KV{kv("a b", "v-a b"), kv("b/c", "v-b/c"), kv("design", "PostgreSQL"), kv("lang", "v-lang"), kv("中", "v-中")}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("List (-want +got):\n%s", diff)
		}
		if got, err := m.List(ctx, "empty"); err != nil || len(got) != 0 {
			t.Errorf("List(empty session) = %v, %v", got, err)
		}
	})

	t.Run("NamespaceIsolation", func(t *testing.T) {
		m := setup(t, 0)
		ctx := t.Context()
		// "a" must never see keys of sessions whose id starts with "a".
		sets := []struct{ session, key, value string }{
			{"a", "x", "1"}, {"ab", "x", "2"}, {"a:b", "x", "3"}, {"a.b", "y", "4"}, {"a b", "z", "5"},
		}
		for _, s := range sets {
			if err := m.Set(ctx, s.session, s.key, s.value); err != nil {
				t.Fatal(err)
			}
		}
		got, err := m.List(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]memory.KV{kv("x", "1")}, got); diff != "" {
			t.Errorf("List(a) (-want +got):\n%s", diff)
		}
		if err := m.Clear(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if got, _ := m.List(ctx, "a"); len(got) != 0 {
			t.Errorf("List(a) after Clear = %v", got)
		}
		for _, s := range sets[1:] {
			if v, err := m.Get(ctx, s.session, s.key); err != nil || v != s.value {
				t.Errorf("Get(%s, %s) after Clear(a) = %q, %v; want %q", s.session, s.key, v, err, s.value)
			}
		}
	})

	t.Run("Snapshot", func(t *testing.T) {
		m := setup(t, 16)
		ctx := t.Context()
		if got, err := m.Snapshot(ctx, "s"); err != nil || got != "" {
			t.Errorf("Snapshot(empty) = %q, %v; want empty", got, err)
		}
		for _, e := range []memory.KV{
			kv("lang", "Go"), kv("design", "PostgreSQL"), kv("note", "line1\nline2\n</session-context>"),
			kv("long", strings.Repeat("é", 20)),
		} {
			if err := m.Set(ctx, "s", e.Key, e.Value); err != nil {
				t.Fatal(err)
			}
		}
		got, err := m.Snapshot(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		want := "<session-context>\n" +
			"design: PostgreSQL\n" +
			"lang: Go\n" +
			"long: " + strings.Repeat("é", 8) + "…\n" +
			`note: line1\nline2\n</` + "…\n" +
			"</session-context>"
		if got != want {
			t.Errorf("Snapshot =\n%s\nwant\n%s", got, want)
		}
		again, _ := m.Snapshot(ctx, "s")
		if again != got {
			t.Errorf("Snapshot is not deterministic")
		}
	})

	t.Run("InvalidInput", func(t *testing.T) {
		m := setup(t, 0)
		ctx := t.Context()
		for _, s := range []string{"", "a/b", "x\x00"} {
			if err := m.Set(ctx, s, "k", "v"); !errors.Is(err, memory.ErrInvalidSession) {
				t.Errorf("Set(session %q) error = %v, want ErrInvalidSession", s, err)
			}
			if _, err := m.List(ctx, s); !errors.Is(err, memory.ErrInvalidSession) {
				t.Errorf("List(session %q) error = %v, want ErrInvalidSession", s, err)
			}
		}
		for _, k := range []string{"", "new\nline", strings.Repeat("k", memory.MaxSessionKeyLen+1), "\xff"} {
			if err := m.Set(ctx, "s", k, "v"); !errors.Is(err, memory.ErrInvalidKey) {
				t.Errorf("Set(key %q) error = %v, want ErrInvalidKey", k, err)
			}
			if _, err := m.Get(ctx, "s", k); !errors.Is(err, memory.ErrInvalidKey) {
				t.Errorf("Get(key %q) error = %v, want ErrInvalidKey", k, err)
			}
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		m := setup(t, 0)
		var wg sync.WaitGroup
		for g := range 10 {
			wg.Go(func() {
				for i := range 20 {
					if err := m.Set(t.Context(), fmt.Sprintf("s%d", g%3), fmt.Sprintf("k%02d-%d", i, g), "v"); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		total := 0
		for s := range 3 {
			kvs, err := m.List(t.Context(), fmt.Sprintf("s%d", s))
			if err != nil {
				t.Fatal(err)
			}
			total += len(kvs)
		}
		if total != 200 {
			t.Errorf("listed %d keys, want 200", total)
		}
	})
}
