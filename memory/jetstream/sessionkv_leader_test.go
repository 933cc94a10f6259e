package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agcore/agcore/memory/jetstream/natstest"
)

// TestSessionMemoryLeaderKilled kills the leader of the session memory's
// stream (SIGKILL, 3 server processes, R3) and reads and writes at once:
// each call waits out the election and succeeds, where one request would
// have timed out, and the value written before the kill is still there.
func TestSessionMemoryLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS server processes and waits out a Raft election; skipped under -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c := natstest.RunProcessCluster(ctx, t, 3, natstest.Options{})
	nc := natstest.Connect(t, c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	var m *SessionMemory
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		var err error
		m, err = NewSessionMemory(actx, SessionMemoryConfig{Conn: nc})
		acancel()
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no bucket on the cluster: %v", err)
		case <-tick.C: // the cluster is still forming its meta group
		}
	}
	if err := m.Set(ctx, "s", "lang", "Go"); err != nil {
		t.Fatal(err)
	}
	leaders, err := Leaders(ctx, nc, "KV")
	if err != nil || len(leaders) != 1 || leaders[0].Leader == "" {
		t.Fatalf("leaders of the bucket's stream = %+v, %v", leaders, err)
	}
	if err := c.ByName(leaders[0].Leader).Kill(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	kvs, err := m.List(ctx, "s")
	if err != nil || len(kvs) != 1 || kvs[0].Value != "Go" {
		t.Fatalf("List after the leader's kill = %+v, %v (after %v)", kvs, err, time.Since(start))
	}
	if err := m.Set(ctx, "s", "editor", "vi"); err != nil {
		t.Fatalf("Set after the leader's kill: %v", err)
	}
	if v, err := m.Get(ctx, "s", "editor"); err != nil || v != "vi" {
		t.Fatalf("Get after the leader's kill = %q, %v", v, err)
	}
	t.Logf("leader %s killed; List answered after %v", leaders[0].Leader, time.Since(start).Round(time.Millisecond))
}
