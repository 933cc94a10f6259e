package jetstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
)

// TestLeaderLossDuringAppends runs three servers with an R3 stream, shuts
// the stream's leader down while a writer appends, and checks that the
// appends resume once the others elect a leader, that every acknowledged
// append is in the journal exactly once, and that the journal is
// contiguous.
func TestLeaderLossDuringAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-server NATS cluster; skipped under -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c := natstest.RunCluster(ctx, t, 3, natstest.Options{SyncAlways: true})
	nc := natstest.Connect(t, c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	j, err := New(ctx, Config{Conn: nc, Replicas: 3, Options: memory.JournalOptions{Durability: memory.DurabilitySync}})
	if err != nil {
		t.Fatal(err)
	}
	if j.cfg.Replicas != 3 {
		t.Fatalf("Replicas = %d, want 3", j.cfg.Replicas)
	}
	stream := j.streamConfig(0).Name
	const session, before, after = "s", 50, 50
	act, tail, err := j.Activate(ctx, session, "member-a")
	if err != nil {
		t.Fatal(err)
	}
	var acked []string
	var stall time.Duration
	appendOne := func(i int) {
		t.Helper()
		text := fmt.Sprintf("e-%03d", i)
		start := time.Now()
		for {
			next, err := j.Append(ctx, session, act, tail, userText(text))
			if errors.Is(err, memory.ErrOutcomeUnknown) {
				t.Fatalf("append %d: %v", i, err)
			}
			if err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
			tail = next
			acked = append(acked, text)
			stall = max(stall, time.Since(start))
			return
		}
	}
	for i := range before {
		appendOne(i)
	}
	leader := c.StreamLeader(stream)
	if leader == nil {
		t.Fatalf("stream %s has no leader", stream)
	}
	stall = 0
	leader.Shutdown()
	for i := before; i < before+after; i++ {
		appendOne(i)
	}
	now := c.StreamLeader(stream)
	if now == nil || now == leader {
		t.Fatalf("stream leader after the shutdown = %v, want another server than %s", now, leader.Name())
	}
	t.Logf("stream leader %s shut down; longest append after it took %v; new leader %s", leader.Name(), stall.Round(time.Millisecond), now.Name())

	seen := map[string]int{}
	var seq uint64
	for e, err := range j.Read(ctx, session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		seq++
		if e.Envelope.Seq != seq {
			t.Fatalf("entry %d has seq %d", seq, e.Envelope.Seq)
		}
		if u, ok := e.Event.(messages.UserMessage); ok {
			seen[u.Message.Text()]++
		}
	}
	if seq != tail {
		t.Errorf("read %d entries, the tail is %d", seq, tail)
	}
	for _, text := range acked {
		if seen[text] != 1 {
			t.Errorf("acknowledged append %s is in the journal %d times, want once", text, seen[text])
		}
	}
	if len(seen) != len(acked) {
		t.Errorf("journal holds %d distinct appends, %d were acknowledged", len(seen), len(acked))
	}
}

// TestLoadThroughFollower appends to a session of an R3 stream and loads
// it right after each append, through a server that does not lead the
// stream: the read consumers it creates are reached across the cluster's
// routes, and one placed on a replica that has not applied the last record
// yet does not cut the read short (the rest is read from the leader).
func TestLoadThroughFollower(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-server NATS cluster; skipped under -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := natstest.RunCluster(ctx, t, 3, natstest.Options{})
	seed := newJournal(t, c.URLs(), Config{Replicas: 3, Options: memory.JournalOptions{SnapshotEvery: -1}})
	leader := c.StreamLeader(seed.streamConfig(0).Name)
	if leader == nil {
		t.Fatal("no stream leader")
	}
	var follower *natstest.Server
	for _, s := range c.Servers {
		if s != leader {
			follower = s
		}
	}
	j := newJournal(t, follower.URL(), Config{Replicas: 3, Options: memory.JournalOptions{SnapshotEvery: -1}})
	var tail uint64
	var err error
	for i := range 40 {
		if tail, err = j.Append(ctx, "s", 0, tail, userText(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 150 {
		if tail, err = j.Append(ctx, "s", 0, tail, userText(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		st, err := j.Load(ctx, "s")
		if err != nil || st.Seq != tail {
			t.Fatalf("Load %d through follower %s = %v, %v; want seq %d", i, follower.Name(), st, err, tail)
		}
	}
}

// TestLeaderKilledDuringAppends runs three server processes with an R3
// stream and kills the stream's leader with SIGKILL while a writer appends:
// the appends stall until the two others elect a leader (the Raft election
// timeout, 4 to 9 s), then resume; every acknowledged append is in the
// journal exactly once and the journal is contiguous. Appends left
// unanswered by the dead leader are resent with their Nats-Msg-Id, so those
// it had stored are acknowledged, not stored twice.
func TestLeaderKilledDuringAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS server processes; skipped under -short")
	}
	killDuringAppends(t, "leader", func(c *natstest.ProcessCluster, leader string) *natstest.Process {
		return c.ByName(leader)
	})
}

// TestFollowerKilledDuringAppends kills a server that follows the stream:
// the leader keeps its quorum and the appends go on.
func TestFollowerKilledDuringAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS server processes; skipped under -short")
	}
	killDuringAppends(t, "follower", func(c *natstest.ProcessCluster, leader string) *natstest.Process {
		for _, p := range c.Procs {
			if p.Name != leader {
				return p
			}
		}
		return nil
	})
}

// killDuringAppends appends to a session of an R3 stream on three server
// processes, kills the server victim picks after 40 appends, appends 80
// more, and checks the journal: contiguous, every acknowledged append
// present once. It logs the longest append after the kill.
func killDuringAppends(t *testing.T, role string, victim func(c *natstest.ProcessCluster, leader string) *natstest.Process) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c := natstest.RunProcessCluster(ctx, t, 3, natstest.Options{SyncAlways: true})
	nc := natstest.Connect(t, c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	cfg := Config{Conn: nc, Replicas: 3, Options: memory.JournalOptions{Durability: memory.DurabilitySync}}
	var j *Journal
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		var err error
		j, err = New(actx, cfg)
		acancel()
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no journal on the cluster: %v", err)
		case <-tick.C: // the cluster is still forming its meta group
		}
	}
	const session, total, killAt = "s", 120, 40
	act, tail, err := j.Activate(ctx, session, "member-a")
	if err != nil {
		t.Fatal(err)
	}
	info, err := j.streams[0].Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leader := info.Cluster.Leader
	killed := victim(c, leader)
	if killed == nil {
		t.Fatalf("no %s among the server processes (leader %q)", role, leader)
	}
	acked := map[string]bool{}
	var stall time.Duration
	for i := range total {
		if i == killAt {
			if err := killed.Kill(); err != nil {
				t.Fatal(err)
			}
		}
		text := fmt.Sprintf("e-%03d", i)
		start := time.Now()
		next, err := j.Append(ctx, session, act, tail, userText(text))
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if took := time.Since(start); i >= killAt && took > stall {
			stall = took
		}
		tail = next
		acked[text] = true
	}
	info, err = j.streams[0].Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Cluster.Leader == killed.Name {
		t.Fatalf("stream leader is still %s after it was killed", killed.Name)
	}
	t.Logf("SIGKILL of stream %s %s: longest append after it %v; leader now %s", role, killed.Name, stall.Round(time.Millisecond), info.Cluster.Leader)

	seen := map[string]int{}
	var seq uint64
	for e, err := range j.Read(ctx, session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		seq++
		if e.Envelope.Seq != seq {
			t.Fatalf("entry %d has seq %d", seq, e.Envelope.Seq)
		}
		if u, ok := e.Event.(messages.UserMessage); ok {
			seen[u.Message.Text()]++
		}
	}
	if seq != tail {
		t.Errorf("read %d entries, the tail is %d", seq, tail)
	}
	for text := range acked {
		if seen[text] != 1 {
			t.Errorf("acknowledged append %s is in the journal %d times, want once", text, seen[text])
		}
	}
	if len(seen) != len(acked) {
		t.Errorf("journal holds %d distinct appends, %d were acknowledged", len(seen), len(acked))
	}
}

// TestResendReplicated resends a stored record on an R3 stream: its leader
// checks the Nats-Msg-Id before the expected sequence, so the resend is
// answered with the stored record's sequence, and nothing is stored twice.
func TestResendReplicated(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-server NATS cluster; skipped under -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := natstest.RunCluster(ctx, t, 3, natstest.Options{})
	j := newJournal(t, c.URLs(), Config{Replicas: 3})
	first, again, err, msgs := resendRecord(t, j)
	if err != nil || again != first {
		t.Errorf("resend = %d, %v; want the stored record's sequence %d", again, err, first)
	}
	if msgs != 1 {
		t.Errorf("stream holds %d records, want 1", msgs)
	}
}
