package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/memory/jetstream"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
)

// TestStreamLeaderKilledUnderTurns runs turns on 4 sessions of 3 member
// processes, over 3 NATS server processes holding the journal in one R3
// stream, and kills the stream's leader with SIGKILL while turns are
// journaling: the turns wait for the election, then go on; every turn
// the client saw complete is in its session's journal exactly once, in
// order, and every journal is contiguous.
func TestStreamLeaderKilledUnderTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 NATS server processes and 3 member processes, and waits out a Raft election (about 20 s); skipped under -short")
	}
	skipUnderRace(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	servers := natstest.RunProcessCluster(ctx, t, 3, natstest.Options{})
	tc := startMembers(ctx, t, servers.URLs(), 1, 3)

	const sessions, before, after = 4, 5, 5
	var killed atomic.Bool
	acks := make(chan struct{}, sessions*100)
	var wg sync.WaitGroup
	acked := make([][]string, sessions)
	longest := make([]time.Duration, sessions)
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("lead-%d", i)
			sinceKill := 0
			for k := 0; !killed.Load() || sinceKill < after; k++ {
				wasKilled := killed.Load()
				turnID := fmt.Sprintf("%s-t%d", id, k)
				tctx, tcancel := context.WithTimeout(ctx, time.Minute)
				start := time.Now()
				reply, err := tc.client.Submit(tctx, id, turnID, "hello")
				took := time.Since(start)
				tcancel()
				if err != nil || reply.Result == nil || reply.Result.Outcome != messages.OutcomeCompleted {
					errs <- fmt.Errorf("turn %s: %+v, %v", turnID, reply, err)
					return
				}
				acked[i] = append(acked[i], turnID)
				longest[i] = max(longest[i], took)
				if wasKilled {
					sinceKill++
				}
				acks <- struct{}{}
			}
		})
	}
	for range sessions * before {
		select {
		case <-acks:
		case err := <-errs:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatalf("turns before the kill: %v", ctx.Err())
		}
	}
	leaders, err := jetstream.Leaders(ctx, tc.nc, "")
	if err != nil || len(leaders) != 1 || leaders[0].Leader == "" {
		t.Fatalf("stream leaders = %+v, %v; want the journal's one stream with its leader", leaders, err)
	}
	leader := servers.ByName(leaders[0].Leader)
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	killed.Store(true)
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case err := <-errs:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatalf("turns after the kill: %v", ctx.Err())
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	t.Logf("stream leader %s killed; the longest turn took %v", leaders[0].Leader, slicesMax(longest).Round(time.Millisecond))

	for i := range sessions {
		id := fmt.Sprintf("lead-%d", i)
		var turnIDs []string
		completed := 0
		for _, ev := range tc.audit(ctx, id) {
			switch e := ev.(type) {
			case messages.UserMessage:
				turnIDs = append(turnIDs, e.TurnID)
			case messages.TurnCompleted:
				completed++
			}
		}
		if fmt.Sprint(turnIDs) != fmt.Sprint(acked[i]) {
			t.Errorf("%s journaled turns %v, the client saw %v complete", id, turnIDs, acked[i])
		}
		if completed != len(acked[i]) {
			t.Errorf("%s journaled %d TurnCompleted for %d turns", id, completed, len(acked[i]))
		}
	}
}

func slicesMax(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
