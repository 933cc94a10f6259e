package chaos

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// JournalOptions configures a Journal. The zero value injects nothing.
type JournalOptions struct {
	// AppendFailRate is the fraction of writes (Append and Activate), in
	// [0, 1], refused with an error wrapping memory.ErrNoSpace (and so
	// syscall.ENOSPC) and ErrInjected, as the Badger journal refuses them
	// when the disk is full. A refused write changes nothing. Zero
	// injects none.
	AppendFailRate float64
	// Seed seeds the draws.
	Seed uint64
	// OnFault receives every injected fault. Nil means none is reported
	// (Stats still counts them).
	OnFault Observer
}

// Journal is a memory.Journal that refuses a fraction of its writes as a
// full disk does, and passes everything else to the journal it wraps.
// Give it to a runtime as actors.Config.Journal. It is safe for concurrent
// use.
type Journal struct {
	memory.Journal
	opts JournalOptions
	dice *dice

	writes, refused atomic.Int64
}

var _ memory.Journal = (*Journal)(nil)

// NewJournal wraps inner. It fails with an error wrapping ErrOptions when
// AppendFailRate is not a fraction.
func NewJournal(inner memory.Journal, opts JournalOptions) (*Journal, error) {
	if inner == nil {
		return nil, fmt.Errorf("%w: nil journal", ErrOptions)
	}
	if err := checkRate("AppendFailRate", opts.AppendFailRate); err != nil {
		return nil, err
	}
	return &Journal{Journal: inner, opts: opts, dice: newDice(opts.Seed)}, nil
}

// refuse counts a write and draws whether it is refused.
func (j *Journal) refuse(session string) bool {
	j.writes.Add(1)
	if j.opts.AppendFailRate == 0 || j.dice.roll() >= j.opts.AppendFailRate {
		return false
	}
	j.refused.Add(1)
	j.opts.OnFault.observe(Fault{Kind: FaultAppendFailed, Session: session})
	return true
}

// Activate refuses the activation or passes it on.
func (j *Journal) Activate(ctx context.Context, session, node string) (uint64, uint64, error) {
	if j.refuse(session) {
		return 0, 0, fmt.Errorf("chaos: journal activate %s: %w: %w", session, ErrInjected, memory.ErrNoSpace)
	}
	return j.Journal.Activate(ctx, session, node)
}

// Append refuses the append or passes it on.
func (j *Journal) Append(ctx context.Context, session string, activation, expectTail uint64, events ...messages.JournalEvent) (uint64, error) {
	if j.refuse(session) {
		return 0, fmt.Errorf("chaos: journal append %s after %d: %w: %w", session, expectTail, ErrInjected, memory.ErrNoSpace)
	}
	return j.Journal.Append(ctx, session, activation, expectTail, events...)
}

// JournalStats counts the writes of a Journal.
type JournalStats struct {
	// Writes counts the calls of Append and Activate.
	Writes int64
	// Refused counts the writes refused.
	Refused int64
}

// Stats returns what the journal has injected so far.
func (j *Journal) Stats() JournalStats {
	return JournalStats{Writes: j.writes.Load(), Refused: j.refused.Load()}
}
