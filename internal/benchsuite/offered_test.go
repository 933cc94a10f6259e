package benchsuite

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
)

// TestRunOffered_SpreadsTurns checks that the open-loop run submits every
// turn once, in turn across the sessions, and reports a latency for each.
func TestRunOffered_SpreadsTurns(t *testing.T) {
	sessions := []*actors.Session{{}, {}, {}}
	var mu sync.Mutex
	calls := map[*actors.Session]int{}
	res, err := runOffered(t.Context(), sessions, 30, 20000, func(s *actors.Session) (time.Duration, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[s]++
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sessions {
		if calls[s] != 10 {
			t.Errorf("session %d got %d turns, want 10", i, calls[s])
		}
	}
	if res.rate != 20000 || res.achieved <= 0 || res.p50 <= 0 || res.p99 < res.p50 {
		t.Errorf("result %+v: want rate 20000, a positive achieved rate and p99 >= p50 > 0", res)
	}
}

// TestRunOffered_ReportsTurnError checks that a failed turn fails the run.
func TestRunOffered_ReportsTurnError(t *testing.T) {
	boom := errors.New("boom")
	_, err := runOffered(t.Context(), []*actors.Session{{}}, 5, 10000, func(*actors.Session) (time.Duration, error) {
		return 0, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}
