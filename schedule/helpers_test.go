package schedule_test

import (
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/schedule"
)

// t0 is the fake clock's start: Tuesday 14 November 2023, 22:13:20 UTC.
var t0 = time.Unix(1_700_000_000, 0).UTC()

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// newStore returns a Store on an in-memory memory.Store, with ids s1, s2,
// ... and the clock at t0.
func newStore(t *testing.T) (*schedule.Store, *clock) {
	t.Helper()
	mem, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	c := &clock{now: t0}
	n := 0
	var mu sync.Mutex
	return schedule.New(mem, schedule.Options{Clock: c.Now, IDs: func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return "s" + string(rune('0'+n))
	}}), c
}

// eventTypes returns the types of schedule id's journal.
func eventTypes(t *testing.T, s *schedule.Store, id string) []schedule.EventType {
	t.Helper()
	evs, err := s.Events(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]schedule.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}
