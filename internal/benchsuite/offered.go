package benchsuite

import (
	"context"
	"sync"
	"time"

	"github.com/agcore/agcore/actors"
)

// offeredResult is the outcome of an open-loop run at a fixed rate.
type offeredResult struct {
	rate     float64 // turns offered per second
	achieved float64 // turns completed per second, first scheduled to last done
	p50, p99 float64 // latency from each turn's scheduled start, in ms
}

// runOffered submits turns turns to sessions at rate turns per second, the
// k-th to sessions[k % len(sessions)] at start + k/rate whether or not the
// earlier ones have finished (an open loop), and measures each turn's
// latency from its scheduled start, so that a late start counts against
// the runtime rather than hiding it. A session given a turn while its
// previous one runs queues it, as Submit does.
func runOffered(ctx context.Context, sessions []*actors.Session, turns int, rate float64,
	turn func(*actors.Session) (time.Duration, error)) (offeredResult, error) {
	res := offeredResult{rate: rate}
	if turns <= 0 || rate <= 0 || len(sessions) == 0 {
		return res, nil
	}
	interval := time.Duration(float64(time.Second) / rate)
	lat := make([]float64, turns)
	errs := make([]error, turns)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var last time.Time
	start := time.Now()
	for k := 0; k < turns; {
		now := time.Now()
		due := int(now.Sub(start)/interval) + 1 // turns whose start time has come
		for ; k < min(due, turns); k++ {
			i, at := k, start.Add(time.Duration(k)*interval)
			s := sessions[i%len(sessions)]
			wg.Go(func() {
				if _, err := turn(s); err != nil {
					errs[i] = err
					return
				}
				done := time.Now()
				lat[i] = millis(done.Sub(at))
				mu.Lock()
				if done.After(last) {
					last = done
				}
				mu.Unlock()
			})
		}
		if k < turns {
			// Pacing, not waiting for a result: the next turn's start time.
			select {
			case <-time.After(time.Until(start.Add(time.Duration(k) * interval))):
			case <-ctx.Done():
				wg.Wait()
				return res, ctx.Err()
			}
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	res.achieved = float64(turns) / last.Sub(start).Seconds()
	res.p50, res.p99 = percentile(lat, 0.50), percentile(lat, 0.99)
	return res, nil
}
