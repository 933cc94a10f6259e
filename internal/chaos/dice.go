package chaos

import (
	"fmt"
	"math/rand/v2"
	"sync"
)

// dice is a seeded random source safe for concurrent use.
type dice struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newDice(seed uint64) *dice {
	return &dice{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// roll returns a number in [0, 1).
func (d *dice) roll() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.r.Float64()
}

// intN returns a number in [0, n).
func (d *dice) intN(n int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.r.IntN(n)
}

// checkRate reports an error naming field when rate is not in [0, 1].
func checkRate(field string, rate float64) error {
	if !(rate >= 0 && rate <= 1) {
		return fmt.Errorf("%w: %s = %v, want a fraction in [0, 1]", ErrOptions, field, rate)
	}
	return nil
}
