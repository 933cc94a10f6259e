package jetstream

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agcore/agcore/memory/jetstream/natstest"
)

// TestLeaders lists the journal's streams on a three-server cluster, each
// with the leader the servers report and the two other servers as
// replicas, and creates nothing on servers that hold no journal.
func TestLeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-server NATS cluster; skipped under -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := natstest.RunCluster(ctx, t, 3, natstest.Options{})
	nc := natstest.Connect(t, c.URLs())

	got, err := Leaders(ctx, nc, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("Leaders before any journal = %+v, want none", got)
	}
	if _, err := New(ctx, Config{Conn: nc, Streams: 3}); err != nil {
		t.Fatal(err)
	}
	// A stream created a moment ago may still be electing its leader.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := range 3 {
		for c.StreamLeader(DefaultStream+"_"+strconv.Itoa(i)) == nil {
			select {
			case <-ctx.Done():
				t.Fatalf("stream %d has no leader: %v", i, ctx.Err())
			case <-tick.C:
			}
		}
	}
	if got, err = Leaders(ctx, nc, ""); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("Leaders = %+v, want the 3 streams", got)
	}
	for i, sl := range got {
		if want := DefaultStream + "_" + strconv.Itoa(i); sl.Stream != want {
			t.Errorf("stream %d is %s, want %s", i, sl.Stream, want)
		}
		leader := c.StreamLeader(sl.Stream)
		if leader == nil || sl.Leader != leader.Name() {
			t.Errorf("%s: leader %q, the servers say %v", sl.Stream, sl.Leader, leader)
		}
		if len(sl.Replicas) != 2 {
			t.Errorf("%s: replicas %v, want the 2 other servers", sl.Stream, sl.Replicas)
		}
	}
}
