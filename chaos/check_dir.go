package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agcore/agcore/memory"
)

// CheckDir runs Check over the journals of the data directory dir, which
// no process may be using (memory.ErrLocked otherwise). The store is
// opened read-only; one that was not closed cleanly (its process was
// killed) is opened for writing once, to replay its write-ahead log as the
// next start would. On top of Check, every journal is verified entry by
// entry against its checksums (memory.BadgerJournal.Verify): a damaged
// one is an InvJournalReadable violation.
func CheckDir(ctx context.Context, dir string, opts CheckOptions) (*Report, error) {
	mo := memory.Options{Dir: dir, ReadOnly: true}
	store, err := memory.Open(mo)
	if errors.Is(err, memory.ErrNeedsReplay) {
		mo.ReadOnly = false
		store, err = memory.Open(mo)
	}
	if err != nil {
		return nil, fmt.Errorf("chaos: check %s: %w", dir, err)
	}
	defer store.Close()
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		return nil, fmt.Errorf("chaos: check %s: %w", dir, err)
	}
	defer j.Close()
	rep, err := Check(ctx, j, opts)
	if err != nil {
		return nil, err
	}
	var damage []Violation
	for id, err := range j.Sessions(ctx) {
		if err != nil {
			return nil, fmt.Errorf("chaos: check %s: %w", dir, err)
		}
		if len(opts.Sessions) > 0 && !slices.Contains(opts.Sessions, id) {
			continue
		}
		vr, err := j.Verify(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("chaos: verify %s: %w", id, err)
		}
		damage = append(damage, VerifyViolations(vr)...)
	}
	rep.Violations = mergeViolations(rep.Violations, damage)
	return rep, nil
}

// VerifyViolations turns the damage memory.BadgerJournal.Verify found in a
// journal into InvJournalReadable violations (an entry missing or past
// the tail is an InvSequence one). Findings that are not damage (a
// snapshot to rewrite, leftovers) are not violations.
func VerifyViolations(r memory.SessionReport) []Violation {
	var out []Violation
	for _, f := range r.Findings {
		if !f.Damage() {
			continue
		}
		out = append(out, Violation{Session: r.Session, Seq: f.Seq, Invariant: InvJournalReadable, Problem: f.Problem})
	}
	return out
}

// mergeViolations adds extra to vs, leaving out an extra violation at the
// same session and entry as one already there.
func mergeViolations(vs, extra []Violation) []Violation {
	for _, e := range extra {
		dup := false
		for _, v := range vs {
			if v.Session == e.Session && v.Seq == e.Seq && v.Invariant == e.Invariant {
				dup = true
				break
			}
		}
		if !dup {
			vs = append(vs, e)
		}
	}
	return vs
}
