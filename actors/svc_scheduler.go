package actors

// This file holds the scheduler service actor, which fires the schedules
// of Config.Schedules into sessions at their fire times, on the runtime's
// clock.

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/schedule"
)

// schedTick is the scheduler's timer: it is due to look at its schedules.
// A tick of an older timer (gen) is ignored.
type schedTick struct{ gen uint64 }

// schedChanged says that a schedule was created, changed or deleted.
type schedChanged struct{}

// fireDone says that the run of a fire has ended (and was recorded as
// finished, unless the runtime was closing before the run reached its
// session: the fire is then resumed when a scheduler starts again).
type fireDone struct {
	schedule string
	n        int
}

// schedulerActor is the scheduler service. At start it resumes the fires
// a previous process journaled but did not finish (with their turn ids, so
// that none runs twice) and applies each schedule's missed-run policy to
// the fire times that passed while no scheduler ran. Then, at each fire
// time, it asks schedule.Decide, journals the fire (or the skip) in the
// store and only then hands the run to its session, from a goroutine
// counted by the runtime's work group. It runs one fire per schedule at a
// time; the fires an overlap policy of queue keeps wait their turn, in
// order.
type schedulerActor struct {
	rt    *Runtime
	store *schedule.Store
	// missed is set for the actor's first start in this runtime: fire
	// times already past were missed while no scheduler ran.
	missed bool

	running map[string]*runningFire // schedule id -> the fire running
	queued  map[string][]int        // schedule id -> its queued fires, in order
	gen     uint64
	stop    func() bool // stops the armed timer; nil when none
	done    chan struct{}
}

// newSchedulerProducer returns the producer of the scheduler actor: the
// first instance sees missed fire times, a restarted one does not.
func newSchedulerProducer(rt *Runtime) actor.Producer {
	first := true
	return func() actor.Actor {
		a := &schedulerActor{rt: rt, store: rt.cfg.Schedules, missed: first}
		first = false
		return a
	}
}

// Receive implements actor.Actor.
func (a *schedulerActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.start(ctx)
	case *actor.Stopping, *actor.Restarting:
		if _, restarting := m.(*actor.Restarting); restarting {
			a.rt.svcRestarts.scheduler.Add(1)
		}
		a.halt()
	case *schedTreeReq:
		n := len(a.running)
		for _, q := range a.queued {
			n += len(q)
		}
		m.reply <- n
	case *schedTick:
		if m.gen == a.gen {
			a.evaluate(ctx, false)
		}
	case *schedChanged:
		a.evaluate(ctx, false)
	case *fireDone:
		a.finished(ctx, m)
	}
}

func (a *schedulerActor) log() *schedulerLog { return &schedulerLog{a.rt} }

// start resumes the pending fires, follows the store's changes and looks
// at every schedule.
func (a *schedulerActor) start(ctx actor.Context) {
	a.running, a.queued, a.done = map[string]*runningFire{}, map[string][]int{}, make(chan struct{})
	changes, cancel := a.store.Changes()
	self, root, done := ctx.Self(), a.rt.system.Root, a.done
	go func() {
		defer cancel()
		for {
			select {
			case <-changes:
				root.Send(self, &schedChanged{})
			case <-done:
				return
			}
		}
	}()
	pending, err := a.store.Pending(a.rt.ctx)
	if err != nil {
		a.log().err(err, "", "reading the pending fires")
	}
	for _, f := range pending {
		if _, busy := a.running[f.Schedule]; busy {
			a.queued[f.Schedule] = append(a.queued[f.Schedule], f.N)
			continue
		}
		if f.Status == schedule.FireQueued {
			started, err := a.store.Start(a.rt.ctx, f.Schedule, f.N, a.rt.clock.Now())
			if err != nil {
				a.log().err(err, f.Schedule, "starting a queued fire")
				continue
			}
			f = started
		}
		a.run(ctx, f)
	}
	missed := a.missed
	a.missed = false
	a.evaluate(ctx, missed)
}

// halt stops the timer and the change listener.
func (a *schedulerActor) halt() {
	if a.stop != nil {
		a.stop()
		a.stop = nil
	}
	if a.done != nil {
		close(a.done)
		a.done = nil
	}
}

// evaluate fires, queues or skips every schedule that is due, then arms
// the timer for the next fire time.
func (a *schedulerActor) evaluate(ctx actor.Context, missed bool) {
	now := a.rt.clock.Now()
	all, err := a.store.List(a.rt.ctx)
	if err != nil {
		a.log().err(err, "", "listing the schedules")
		return
	}
	var next time.Time
	for _, sc := range all {
		busy := a.busy(sc.ID)
		action, reason := schedule.Decide(sc, now, busy, len(a.queued[sc.ID]), missed)
		switch action {
		case schedule.Run, schedule.Queue:
			f, after, err := a.store.Fire(a.rt.ctx, sc.ID, now, action == schedule.Queue)
			if err != nil {
				a.log().err(err, sc.ID, "journaling a fire")
				continue
			}
			sc = after
			if action == schedule.Queue {
				a.queued[sc.ID] = append(a.queued[sc.ID], f.N)
			} else {
				a.run(ctx, f)
			}
		case schedule.Skip:
			after, err := a.store.Skip(a.rt.ctx, sc.ID, now, reason)
			if err != nil {
				a.log().err(err, sc.ID, "journaling a skip")
				continue
			}
			a.rt.logger.Info().Str("schedule", sc.ID).Str("reason", reason).Msg("scheduler: fire time skipped")
			sc = after
		}
		if sc.State == schedule.StateActive && (next.IsZero() || sc.NextFire.Before(next)) {
			next = sc.NextFire
		}
	}
	a.arm(ctx, now, next)
}

// arm sets the timer for next (none when it is zero).
func (a *schedulerActor) arm(ctx actor.Context, now, next time.Time) {
	if a.stop != nil {
		a.stop()
		a.stop = nil
	}
	a.gen++
	if next.IsZero() {
		return
	}
	tick, self, root := &schedTick{gen: a.gen}, ctx.Self(), a.rt.system.Root
	a.stop = a.rt.clock.AfterFunc(max(next.Sub(now), 0), func() { root.Send(self, tick) })
}

// runningFire is a fire whose run the scheduler started. ended is set by
// the run's goroutine once the turn is over, before the finish is
// journaled; the scheduler learns of it later, from fireDone.
type runningFire struct {
	n     int
	ended atomic.Bool
}

// busy reports whether schedule id has a run in progress, or fires queued
// behind one: a run whose turn is over no longer counts, even before its
// fireDone arrives, so that the next fire time is not taken for an
// overlap.
func (a *schedulerActor) busy(id string) bool {
	r := a.running[id]
	return r != nil && (!r.ended.Load() || len(a.queued[id]) > 0)
}

// finished starts the next queued fire of the schedule whose run ended.
func (a *schedulerActor) finished(ctx actor.Context, m *fireDone) {
	if r := a.running[m.schedule]; r != nil && r.n == m.n {
		delete(a.running, m.schedule)
	}
	q := a.queued[m.schedule]
	for len(q) > 0 {
		n := q[0]
		q = q[1:]
		f, err := a.store.Start(a.rt.ctx, m.schedule, n, a.rt.clock.Now())
		if err != nil {
			// A deleted schedule drops its queued fires.
			if !errors.Is(err, schedule.ErrNotFound) {
				a.log().err(err, m.schedule, "starting a queued fire")
			}
			continue
		}
		a.run(ctx, f)
		break
	}
	if len(q) == 0 {
		delete(a.queued, m.schedule)
	} else {
		a.queued[m.schedule] = q
	}
}

// run hands fire f, journaled already, to its session.
func (a *schedulerActor) run(ctx actor.Context, f schedule.Fire) {
	r := &runningFire{n: f.N}
	a.running[f.Schedule] = r
	rt, self := a.rt, ctx.Self()
	rt.work.Add(1)
	go func() {
		defer rt.work.Done()
		outcome, reason, ok := rt.runFire(f)
		// Before the finish is journaled: whoever sees it, and fires the
		// schedule again, finds the run over.
		r.ended.Store(true)
		if ok {
			// The store outlives the runtime's context: the outcome of a
			// run that ended during Shutdown is still recorded.
			if _, err := a.store.Finish(context.WithoutCancel(rt.ctx), f.Schedule, f.N, rt.clock.Now(), outcome, reason); err != nil && !errors.Is(err, schedule.ErrNotFound) {
				(&schedulerLog{rt}).err(err, f.Schedule, "journaling a finish")
			}
		}
		rt.system.Root.Send(self, &fireDone{schedule: f.Schedule, n: f.N})
	}()
}

// runFire submits fire f to its session, with its turn id, and returns the
// outcome of the turn. ok is false when the runtime closed before the
// turn could run: the fire stays pending, to be resumed by the next
// scheduler.
func (rt *Runtime) runFire(f schedule.Fire) (outcome, reason string, ok bool) {
	ctx := rt.ctx
	log := rt.logger.With().Str("schedule", f.Schedule).Str("fire", f.ID).Str("session", f.Session).Logger()
	sess, err := rt.Open(ctx, f.Session)
	if err == nil && f.Agent != "" {
		var st Status
		if st, err = sess.Status(ctx); err == nil && st.Agent != f.Agent {
			err = sess.SwitchAgent(ctx, f.Agent)
		}
	}
	var res *TurnResult
	if err == nil {
		log.Info().Msg("scheduler: run started")
		res, err = sess.Submit(ctx, messages.UserText(f.Prompt), WithTurnID(f.TurnID))
	}
	if res != nil {
		log.Info().Str("outcome", string(res.Outcome)).Msg("scheduler: run ended")
		return string(res.Outcome), res.Reason, true
	}
	if errors.Is(err, ErrClosed) || ctx.Err() != nil {
		return "", "", false
	}
	log.Warn().Err(err).Msg("scheduler: run failed")
	return "error", err.Error(), true
}

// schedulerLog logs the scheduler's failures.
type schedulerLog struct{ rt *Runtime }

func (l *schedulerLog) err(err error, id, what string) {
	if l.rt.ctx.Err() != nil {
		return
	}
	e := l.rt.logger.Error().Err(err)
	if id != "" {
		e = e.Str("schedule", id)
	}
	e.Msg("scheduler: " + what)
}
