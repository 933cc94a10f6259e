package supervisor

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrBudgetExhausted is wrapped by every *BudgetExhaustedError.
var ErrBudgetExhausted = errors.New("supervisor: restart budget exhausted")

// BudgetExhaustedError says that an actor failed more often than its budget
// allows. Last is the failure that exhausted the budget.
type BudgetExhaustedError struct {
	Key      string
	Failures int
	Window   time.Duration
	Last     error
}

// Error implements error.
func (e *BudgetExhaustedError) Error() string {
	return fmt.Sprintf("supervisor: %s failed %d times within %s, giving up: %v", e.Key, e.Failures, e.Window, e.Last)
}

// Unwrap returns ErrBudgetExhausted and the last failure.
func (e *BudgetExhaustedError) Unwrap() []error { return []error{ErrBudgetExhausted, e.Last} }

// BudgetOptions configures a Budget. The zero value allows 3 failures per
// minute on the system clock.
type BudgetOptions struct {
	// MaxFailures is the number of failures tolerated within Window; the
	// next one exhausts the budget. Zero means 3; negative means no failure
	// is tolerated.
	MaxFailures int
	// Window is the sliding window failures are counted in. Zero means one
	// minute.
	Window time.Duration
	// Clock tells the time. Nil means SystemClock().
	Clock Clock
}

// Budget counts failures per key (an actor's id) within a sliding window.
// It is safe for concurrent use.
type Budget struct {
	max    int
	window time.Duration
	clock  Clock

	mu       sync.Mutex
	failures map[string][]time.Time
}

// NewBudget returns a Budget with the options' defaults filled in.
func NewBudget(opts BudgetOptions) *Budget {
	b := &Budget{max: opts.MaxFailures, window: opts.Window, clock: opts.Clock, failures: make(map[string][]time.Time)}
	switch {
	case b.max == 0:
		b.max = 3
	case b.max < 0:
		b.max = 0
	}
	if b.window <= 0 {
		b.window = time.Minute
	}
	if b.clock == nil {
		b.clock = SystemClock()
	}
	return b
}

// Fail records a failure of key. It returns nil while the failures within
// the window are at most MaxFailures, and a *BudgetExhaustedError wrapping
// reason once they exceed it; the count of key is then cleared.
func (b *Budget) Fail(key string, reason any) error {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	kept := b.failures[key][:0]
	for _, t := range b.failures[key] {
		if now.Sub(t) < b.window {
			kept = append(kept, t)
		}
	}
	kept = append(kept, now)
	if len(kept) > b.max {
		delete(b.failures, key)
		return &BudgetExhaustedError{Key: key, Failures: len(kept), Window: b.window, Last: AsError(reason)}
	}
	b.failures[key] = kept
	return nil
}

// Failures returns the number of failures of key within the window.
func (b *Budget) Failures(key string) int {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, t := range b.failures[key] {
		if now.Sub(t) < b.window {
			n++
		}
	}
	return n
}

// Reset forgets the failures of key (a stopped actor, a success).
func (b *Budget) Reset(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.failures, key)
}
