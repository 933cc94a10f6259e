package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
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

// checkRates checks each rate and that they add up to at most 1; names and
// rates go in pairs.
func checkRates(names []string, rates ...float64) error {
	sum := 0.0
	for i, r := range rates {
		if err := checkRate(names[i], r); err != nil {
			return err
		}
		sum += r
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("%w: the rates %v add up to %v, want at most 1", ErrOptions, names, sum)
	}
	return nil
}

// checkDelay reports an error naming field when d is negative.
func checkDelay(field string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%w: %s = %v, want zero (the default) or more", ErrOptions, field, d)
	}
	return nil
}

// wait blocks for d or until ctx is done, and returns ctx's error then.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
