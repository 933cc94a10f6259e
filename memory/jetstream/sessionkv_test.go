package jetstream

import (
	"context"
	"errors"
	"fmt"
	"testing"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/memory/storetest"
)

// TestSessionMemoryConformance runs the session-memory suite of
// memory/storetest against the JetStream bucket, on file and memory
// storage.
func TestSessionMemoryConformance(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	n := 0
	for _, mem := range []bool{false, true} {
		t.Run(fmt.Sprintf("memory=%v", mem), func(t *testing.T) {
			storetest.RunSessionMemoryTests(t, func(t *testing.T, capBytes int) storetest.SessionMemory {
				n++
				m, err := NewSessionMemory(t.Context(), SessionMemoryConfig{
					Conn: natstest.Connect(t, srv.URL()), Bucket: fmt.Sprintf("SM_%d", n), Memory: mem, SnapshotValueBytes: capBytes,
				})
				if err != nil {
					t.Fatal(err)
				}
				return m
			})
		})
	}
}

// TestSessionMemorySharedByMembers sets a fact through one connection and
// reads it through another, as two members of a cluster would.
func TestSessionMemorySharedByMembers(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	ctx := context.Background()
	open := func() *SessionMemory {
		m, err := NewSessionMemory(ctx, SessionMemoryConfig{Conn: natstest.Connect(t, srv.URL())})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := open(), open()
	if err := a.Set(ctx, "s", "lang", "Go"); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Get(ctx, "s", "lang"); err != nil || v != "Go" {
		t.Errorf("Get through the other member = %q, %v; want Go", v, err)
	}
	if err := b.Clear(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if kvs, err := a.List(ctx, "s"); err != nil || len(kvs) != 0 {
		t.Errorf("List after the other member cleared = %v, %v; want none", kvs, err)
	}
	if _, err := a.Get(ctx, "s", "lang"); err == nil {
		t.Errorf("Get after Clear found the key")
	} else if !isNotFound(err) {
		t.Errorf("Get after Clear: error = %v, want memory.ErrNotFound", err)
	}
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, memory.ErrNotFound) }

// TestSessionMemoryReadsFromTheLeader checks that the bucket answers reads
// from its stream's leader only: a bucket it creates, and one created
// before with direct gets allowed (as nats.go's CreateKeyValue makes it),
// which any replica would answer, possibly before it has the latest Set.
func TestSessionMemoryReadsFromTheLeader(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	ctx := t.Context()
	nc := natstest.Connect(t, srv.URL())
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(ctx, njs.KeyValueConfig{Bucket: "OLD"}); err != nil {
		t.Fatal(err)
	}
	for _, bucket := range []string{"NEW", "OLD"} {
		m, err := NewSessionMemory(ctx, SessionMemoryConfig{Conn: nc, Bucket: bucket})
		if err != nil {
			t.Fatal(err)
		}
		st, err := js.Stream(ctx, "KV_"+bucket)
		if err != nil {
			t.Fatal(err)
		}
		if st.CachedInfo().Config.AllowDirect {
			t.Errorf("bucket %s: its stream allows direct gets, which any replica answers", bucket)
		}
		if err := m.Set(ctx, "s", "k", "v"); err != nil {
			t.Fatal(err)
		}
		if v, err := m.Get(ctx, "s", "k"); err != nil || v != "v" {
			t.Errorf("bucket %s: Get after Set = %q, %v", bucket, v, err)
		}
	}
}
