package schedule

// This file holds what a scheduler does with the Store: decide what a due
// schedule does (Decide), and journal fires, skips, starts and finishes.

import (
	"context"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Action is what a scheduler does with a schedule at a given time.
type Action int

// The actions of Decide.
const (
	// Wait: the schedule is ended, or not due.
	Wait Action = iota
	// Run: fire it and start its run now.
	Run
	// Queue: fire it, to run after the runs before it (OverlapQueue).
	Queue
	// Skip: drop the fire time (the reason says why).
	Skip
)

// String returns the action's name.
func (a Action) String() string {
	switch a {
	case Wait:
		return "wait"
	case Run:
		return "run"
	case Queue:
		return "queue"
	case Skip:
		return "skip"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Reasons a fire time is skipped.
const (
	ReasonMissed     = "due while no scheduler ran (missed: skip)"
	ReasonOverlap    = "the previous run was still going (overlap: skip)"
	ReasonQueueFull  = "the queue of fires waiting for a run was full"
	reasonMaxRuns    = "ran max_runs times"
	reasonEndDate    = "the end date passed"
	reasonNoFireTime = "the expression has no further fire time"
)

// Decide says what a scheduler does with sc at now. busy says whether a
// run of sc is in progress, queued how many of its fires wait; missed says
// whether the scheduler has just started, so that a fire time that is
// already past was missed while no scheduler ran.
func Decide(sc Schedule, now time.Time, busy bool, queued int, missed bool) (Action, string) {
	switch {
	case sc.State != StateActive || sc.NextFire.IsZero() || sc.NextFire.After(now):
		return Wait, ""
	case missed && sc.missed() == MissedSkip:
		return Skip, ReasonMissed
	case !busy:
		return Run, ""
	case sc.overlap() == OverlapSkip:
		return Skip, ReasonOverlap
	case queued >= MaxQueued:
		return Skip, ReasonQueueFull
	}
	return Queue, ""
}

// advance moves sc past its due fire time: to the next fire time after
// it, or after now when that one is past too (fire times missed in a row
// collapse into one), ending sc when it has none.
func (sc *Schedule) advance(now time.Time) error {
	c, err := ParseCron(sc.Expr, sc.TimeZone)
	if err != nil {
		return err
	}
	next := c.Next(sc.NextFire)
	if !next.IsZero() && !next.After(now) {
		next = c.Next(now)
	}
	sc.setNext(next)
	return nil
}

// Fire journals the fire of schedule id that is due at now, before its
// run starts: its fire record (running, or queued when queued is set),
// the schedule's advanced next fire time and run count, and the events
// fired (or queued) and, when this was the last run, ended, all in one
// synced transaction. session is the session to run in: the schedule's,
// or, when it has none, the fire's own id. It fails with ErrNotDue when
// the schedule is ended or not due.
func (s *Store) Fire(ctx context.Context, id string, now time.Time, queued bool) (Fire, Schedule, error) {
	now = now.UTC()
	var (
		f  Fire
		sc Schedule
	)
	err := s.write(ctx, "fire "+id, func(txn *badger.Txn) (err error) {
		if sc, err = get[Schedule](txn, scheduleKey(id)); err != nil {
			return err
		}
		if sc.State != StateActive || sc.NextFire.After(now) {
			return fmt.Errorf("%w: %q", ErrNotDue, id)
		}
		due := sc.NextFire
		sc.Runs++
		f = Fire{ID: FireID(id, sc.Runs), Schedule: id, N: sc.Runs, Due: due, FiredAt: now,
			Session: sc.Session, Prompt: sc.Prompt, Agent: sc.Agent, Status: FireRunning}
		if f.Session == "" {
			f.Session = f.ID
		}
		f.TurnID = "schedule-" + f.ID
		typ := EventFired
		if queued {
			f.Status, typ = FireQueued, EventQueued
		}
		sc.LastFire = f.ID
		if err := s.appendEvent(txn, &sc, Event{Time: now, Type: typ, Fire: f.ID, Due: due}); err != nil {
			return err
		}
		if sc.MaxRuns != 0 && sc.Runs >= sc.MaxRuns {
			sc.end(reasonMaxRuns)
		} else if err := sc.advance(now); err != nil {
			return err
		}
		if sc.State == StateEnded {
			if err := s.appendEvent(txn, &sc, Event{Time: now, Type: EventEnded, Reason: sc.EndReason}); err != nil {
				return err
			}
		}
		if err := put(txn, seqKey(firePrefix(id), uint64(f.N)), f); err != nil {
			return err
		}
		if f.N > KeepFires {
			if err := txn.Delete(seqKey(firePrefix(id), uint64(f.N-KeepFires))); err != nil {
				return err
			}
		}
		return put(txn, scheduleKey(id), sc)
	})
	if err != nil {
		return Fire{}, Schedule{}, err
	}
	return f, sc, nil
}

// Skip drops the due fire time of schedule id, journaled as skipped with
// reason, and advances it as Fire does. It fails with ErrNotDue when the
// schedule is ended or not due.
func (s *Store) Skip(ctx context.Context, id string, now time.Time, reason string) (Schedule, error) {
	now = now.UTC()
	var sc Schedule
	err := s.write(ctx, "skip "+id, func(txn *badger.Txn) (err error) {
		if sc, err = get[Schedule](txn, scheduleKey(id)); err != nil {
			return err
		}
		if sc.State != StateActive || sc.NextFire.After(now) {
			return fmt.Errorf("%w: %q", ErrNotDue, id)
		}
		if err := s.appendEvent(txn, &sc, Event{Time: now, Type: EventSkipped, Due: sc.NextFire, Reason: reason}); err != nil {
			return err
		}
		if err := sc.advance(now); err != nil {
			return err
		}
		if sc.State == StateEnded {
			if err := s.appendEvent(txn, &sc, Event{Time: now, Type: EventEnded, Reason: sc.EndReason}); err != nil {
				return err
			}
		}
		return put(txn, scheduleKey(sc.ID), sc)
	})
	if err != nil {
		return Schedule{}, err
	}
	return sc, nil
}

// Start marks the queued fire n of schedule id as running, journaled as
// started, before its run starts. A fire already running is returned as
// it is.
func (s *Store) Start(ctx context.Context, id string, n int, now time.Time) (Fire, error) {
	var f Fire
	err := s.updateFire(ctx, "start", id, n, func(sc *Schedule, txn *badger.Txn) error {
		if f.Status != FireQueued {
			return nil
		}
		f.Status, f.StartedAt = FireRunning, now.UTC()
		return s.appendEvent(txn, sc, Event{Time: now.UTC(), Type: EventStarted, Fire: f.ID})
	}, &f)
	return f, err
}

// Finish records how fire n of schedule id ended, journaled as finished.
// outcome is the turn's outcome, "error" when the run could not be
// submitted; reason explains any outcome but completed. It fails with
// ErrNotFound when the schedule was deleted meanwhile.
func (s *Store) Finish(ctx context.Context, id string, n int, now time.Time, outcome, reason string) (Fire, error) {
	var f Fire
	err := s.updateFire(ctx, "finish", id, n, func(sc *Schedule, txn *badger.Txn) error {
		if f.Status == FireFinished {
			return nil
		}
		f.Status, f.FinishedAt, f.Outcome, f.Reason = FireFinished, now.UTC(), outcome, reason
		return s.appendEvent(txn, sc, Event{Time: now.UTC(), Type: EventFinished, Fire: f.ID, Outcome: outcome, Reason: reason})
	}, &f)
	return f, err
}

// updateFire loads fire n of schedule id into f, calls change, and stores
// both again.
func (s *Store) updateFire(ctx context.Context, op, id string, n int, change func(*Schedule, *badger.Txn) error, f *Fire) error {
	key := seqKey(firePrefix(id), uint64(n))
	return s.write(ctx, fmt.Sprintf("%s %s", op, FireID(id, n)), func(txn *badger.Txn) (err error) {
		sc, err := get[Schedule](txn, scheduleKey(id))
		if err != nil {
			return err
		}
		if *f, err = get[Fire](txn, key); err != nil {
			return err
		}
		before := sc.Events
		if err := change(&sc, txn); err != nil {
			return err
		}
		if sc.Events == before {
			return nil
		}
		if err := put(txn, key, *f); err != nil {
			return err
		}
		return put(txn, scheduleKey(id), sc)
	})
}
