package supervisor

import (
	"math/rand/v2"
	"time"
)

// Clock tells the time and schedules callbacks. Implementations must be safe
// for concurrent use. Tests inject a fake; [SystemClock] uses package time
// (which testing/synctest virtualises).
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d. The returned function
	// cancels the call and reports whether it did so before f started.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock returns the Clock of package time.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// Rand is a source of jitter. *rand.Rand from math/rand/v2 implements it.
// Implementations used by more than one goroutine must be safe for
// concurrent use; [NewRand] returns one that is.
type Rand interface {
	// Int64N returns a number in [0, n). n is positive.
	Int64N(n int64) int64
}

// NewRand returns a concurrency-safe Rand seeded with seed, so that a run
// can be reproduced.
func NewRand(seed uint64) Rand {
	return &lockedRand{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}
