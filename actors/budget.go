package actors

// This file holds Budget, the limits of a sub-agent subtree, and
// budgetTracker, which counts what a subtree spends.

import (
	"fmt"
	"sync"
	"time"

	"github.com/agcore/agcore/messages"
)

// Budget bounds what a sub-agent and everything it spawns may spend. A zero
// field bounds nothing. A sub-agent that resumes after a crash has spent,
// according to its journals, what its subtree spent before: that counts
// once, against its budget and those of the subtrees around it.
type Budget struct {
	// MaxTokens is the subtree's total token budget.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// MaxCost is the subtree's cost budget, in the price table's currency.
	MaxCost float64 `json:"max_cost,omitempty"`
	// MaxTime is the sub-agent's wall-clock time, from its first spawn
	// (journaled with it): a sub-agent resumed after a crash has what is
	// left, the time the process was down included, and one whose time
	// ran out meanwhile is stopped at once.
	MaxTime time.Duration `json:"max_time,omitempty"`
	// MaxRoundTrips is the number of model calls the subtree may make.
	MaxRoundTrips int `json:"max_round_trips,omitempty"`
}

// tighten returns b with each field lowered to o's where o is tighter.
func (b Budget) tighten(o Budget) Budget {
	if o.MaxTokens > 0 && (b.MaxTokens <= 0 || o.MaxTokens < b.MaxTokens) {
		b.MaxTokens = o.MaxTokens
	}
	if o.MaxCost > 0 && (b.MaxCost <= 0 || o.MaxCost < b.MaxCost) {
		b.MaxCost = o.MaxCost
	}
	if o.MaxTime > 0 && (b.MaxTime <= 0 || o.MaxTime < b.MaxTime) {
		b.MaxTime = o.MaxTime
	}
	if o.MaxRoundTrips > 0 && (b.MaxRoundTrips <= 0 || o.MaxRoundTrips < b.MaxRoundTrips) {
		b.MaxRoundTrips = o.MaxRoundTrips
	}
	return b
}

// spend is what a sub-agent subtree spent.
type spend struct {
	usage messages.Usage
	cost  float64
	trips int
}

// budgetTracker counts what a sub-agent subtree spends, for every model
// call of every session in it, and stops the subtree once it has spent its
// budget. Trackers form a chain up to the top-level sub-agent, so a model
// call is charged to every enclosing subtree. The sessions of the subtree
// charge it from their own actors, so it is safe for concurrent use.
type budgetTracker struct {
	parent *budgetTracker
	child  string
	limit  Budget

	mu       sync.Mutex
	loaded   bool
	usage    messages.Usage
	cost     float64
	trips    int
	exceeded string
	stop     func(error)
}

func newBudgetTracker(parent *budgetTracker, child string, limit Budget) *budgetTracker {
	return &budgetTracker{parent: parent, child: child, limit: limit}
}

// remaining is the budget left to a new subtree under b: the tightest of
// what b and its ancestors have left.
func (b *budgetTracker) remaining() Budget {
	var out Budget
	for t := b; t != nil; t = t.parent {
		t.mu.Lock()
		left := Budget{MaxTime: t.limit.MaxTime}
		if t.limit.MaxTokens > 0 {
			left.MaxTokens = max(t.limit.MaxTokens-t.usage.TotalTokens, 1)
		}
		if t.limit.MaxCost > 0 {
			left.MaxCost = max(t.limit.MaxCost-t.cost, 1e-9)
		}
		if t.limit.MaxRoundTrips > 0 {
			left.MaxRoundTrips = max(t.limit.MaxRoundTrips-t.trips, 1)
		}
		t.mu.Unlock()
		out = out.tighten(left)
	}
	return out
}

// setStop arms the function that stops the subtree, and calls it at once
// when the budget is already spent.
func (b *budgetTracker) setStop(stop func(error)) {
	b.mu.Lock()
	b.stop = stop
	reason := b.exceeded
	b.mu.Unlock()
	if reason != "" {
		stop(&budgetError{child: b.child, reason: reason})
	}
}

// load charges what the sub-agent's journal says its subtree spent before
// this tracker existed (the sub-agent resumes after a crash) to the
// tracker and every enclosing subtree. Only the first call counts: an
// actor that restarts in the same process finds its tracker up to date.
func (b *budgetTracker) load(u messages.Usage, cost float64, trips int) {
	b.mu.Lock()
	first := !b.loaded
	b.loaded = true
	b.mu.Unlock()
	if first && (trips > 0 || u != (messages.Usage{}) || cost != 0) {
		b.charge(u, cost, trips)
	}
}

// charge counts trips model calls of usage u and cost in every enclosing
// subtree. It stops each subtree whose budget is spent, and returns the
// reason when b's own is.
func (b *budgetTracker) charge(u messages.Usage, cost float64, trips int) string {
	var own string
	for t := b; t != nil; t = t.parent {
		if reason := t.add(u, cost, trips); reason != "" && t == b {
			own = reason
		}
	}
	return own
}

func (b *budgetTracker) add(u messages.Usage, cost float64, trips int) string {
	b.mu.Lock()
	b.usage = b.usage.Add(u)
	b.cost += cost
	b.trips += trips
	var reason string
	switch {
	case b.limit.MaxTokens > 0 && b.usage.TotalTokens > b.limit.MaxTokens:
		reason = fmt.Sprintf("budget of %d tokens exhausted (used %d)", b.limit.MaxTokens, b.usage.TotalTokens)
	case b.limit.MaxCost > 0 && b.cost > b.limit.MaxCost:
		reason = fmt.Sprintf("budget of %.4f cost exhausted (spent %.4f)", b.limit.MaxCost, b.cost)
	case b.limit.MaxRoundTrips > 0 && b.trips > b.limit.MaxRoundTrips:
		reason = fmt.Sprintf("budget of %d model round trips exhausted", b.limit.MaxRoundTrips)
	}
	stop := b.exceedLocked(reason)
	b.mu.Unlock()
	if stop != nil {
		stop(&budgetError{child: b.child, reason: reason})
	}
	return reason
}

// exceed stops the subtree for reason (its wall time ran out).
func (b *budgetTracker) exceed(reason string) {
	b.mu.Lock()
	stop := b.exceedLocked(reason)
	b.mu.Unlock()
	if stop != nil {
		stop(&budgetError{child: b.child, reason: reason})
	}
}

// exceedLocked records the first reason and returns the stop function to
// call for it, nil when there is nothing to do.
func (b *budgetTracker) exceedLocked(reason string) func(error) {
	if reason == "" || b.exceeded != "" {
		return nil
	}
	b.exceeded = reason
	return b.stop
}

// exceededReason returns why the subtree was stopped, "" if it was not.
func (b *budgetTracker) exceededReason() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.exceeded
}

// budgetError says that a sub-agent subtree was stopped because it spent
// its budget (tokens, cost, round trips or wall time).
type budgetError struct {
	// child is the sub-agent session that was stopped.
	child string
	// reason names the budget, as in "budget of 500 tokens exhausted".
	reason string
}

func (e *budgetError) Error() string {
	return fmt.Sprintf("sub-agent %s stopped: %s", e.child, e.reason)
}
