package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/messages"
)

// BenchmarkMembers runs text turns through a client on 1 member and on 3
// members (separate processes, one NATS cluster of 3 servers, an R3
// journal), from 16 callers at once, each on its own sessions. It reports
// turns/s and the p50 and p99 of a turn as the client sees it. Run it
// with a fixed count of turns, for example:
//
//	go test -run '^$' -bench Members -benchtime 800x ./actors/cluster
func BenchmarkMembers(b *testing.B) {
	for _, members := range []int{1, 3} {
		b.Run(fmt.Sprintf("members=%d", members), func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			skipUnderRace(b)
			tc := startCluster(ctx, b, members)
			const callers = 16
			// Every session is activated once before the clock starts.
			for c := range callers {
				if _, err := tc.client.Submit(ctx, fmt.Sprintf("b%d-%d", members, c), "warm", "hello"); err != nil {
					b.Fatal(err)
				}
			}
			var next atomic.Int64
			var mu sync.Mutex
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for c := range callers {
				wg.Go(func() {
					session := fmt.Sprintf("b%d-%d", members, c)
					for {
						k := next.Add(1)
						if k > int64(b.N) {
							return
						}
						t0 := time.Now()
						reply, err := tc.client.Submit(ctx, session, fmt.Sprintf("t%d", k), "hello")
						d := time.Since(t0)
						if err != nil || reply.Result == nil || reply.Result.Outcome != messages.OutcomeCompleted {
							b.Errorf("turn %d on %s: %+v, %v", k, session, reply, err)
							return
						}
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) == 0 {
				return
			}
			b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "turns/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
