package supervisor

import (
	"math/rand/v2"
	"sync"
)

// lockedRand serialises access to a *rand.Rand, which is not safe for
// concurrent use.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Int64N(n int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Int64N(n)
}
