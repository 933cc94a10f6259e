package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// spend is what a sub-agent subtree spent.
type spend struct {
	usage messages.Usage
	cost  float64
	trips int
}

// subTaskTurnID is the turn id of a sub-agent's task: a sub-agent session
// runs one task, so resubmitting it after a crash follows the same turn.
const subTaskTurnID = "task"

// runSub runs task as the turn of sub-agent e and waits for it to end. When
// ctx is cancelled first, the turn is cancelled with ctx's cause and runSub
// waits for it to end.
func (rt *Runtime) runSub(ctx context.Context, e *entry, task string) (messages.TurnEnded, error) {
	sub := newSubscriber(subTaskTurnID, rt.cfg.EventBuffer)
	defer e.hub.remove(sub)
	rt.sendEntry(e, &submitCmd{turnID: subTaskTurnID, msg: messages.UserText(task), sub: sub})
	select {
	case <-sub.done:
	case <-ctx.Done():
		rt.system.Root.Send(e.pid, &cancelCmd{reason: context.Cause(ctx).Error()})
		select {
		case <-sub.done:
		case <-e.gone:
		case <-rt.ctx.Done():
			return messages.TurnEnded{}, ErrClosed
		}
	}
	sub.mu.Lock()
	final, err := sub.final, sub.err
	sub.mu.Unlock()
	ended, ok := final.(messages.TurnEnded)
	if !ok {
		if err == nil {
			err = fmt.Errorf("%w: sub-agent %s stopped before its task ended", ErrSessionStopped, e.id)
		}
		return ended, err
	}
	return ended, nil
}

// settledSpend waits until sub-agent e has heard from every sub-agent of
// its ended turns (see settleCmd), then returns what its subtree spent.
// When e's actor has stopped, e's journal says.
func (rt *Runtime) settledSpend(e *entry) (spend, error) {
	reply := make(chan Status, 1)
	rt.system.Root.Send(e.pid, &settleCmd{reply: reply})
	select {
	case st := <-reply:
		return spend{st.Usage, st.Cost, st.RoundTrips}, nil
	case <-e.gone:
		select {
		case st := <-reply:
			return spend{st.Usage, st.Cost, st.RoundTrips}, nil
		default:
		}
		return rt.journaledSpend(e.id)
	case <-rt.ctx.Done():
		return spend{}, ErrClosed
	}
}

// journaledSpend returns what the journal of session id says its subtree
// spent.
func (rt *Runtime) journaledSpend(id string) (spend, error) {
	st, err := rt.journal.Load(rt.ctx, id)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		return spend{}, nil
	case err != nil:
		return spend{}, fmt.Errorf("actors: usage of sub-agent %s: %w", id, err)
	}
	return spend{st.Usage, st.Cost, st.RoundTrips}, nil
}

// subRun is a spawned sub-agent to run: what onSubSpawn answered, and how
// to stop it.
type subRun struct {
	// pid and parent are the spawning session's actor and entry.
	pid    *actor.PID
	parent *entry
	callID string
	child  string
	task   string
	limit  Budget
	spec   *subSpec
	spawn  subSpawnReply
	// ctx is the run's context; stop cancels it, and was handed to the
	// spawning session with the spawn.
	ctx  context.Context
	stop context.CancelCauseFunc
}

// driveSub runs the task of a spawned sub-agent under its budget and
// returns how it ended, with what its whole subtree spent. Unless the
// spawning session's journal counts the sub-agent already, the result is
// reported to it (which journals it and stops the sub-agent's actor), and
// driveSub waits for that until ctx ends. The error is nil when the task
// completed; it is a *BudgetError when the budget stopped it.
func (rt *Runtime) driveSub(ctx context.Context, r subRun) (messages.SubAgentFinished, error) {
	e := r.spawn.e
	tracker := r.spec.budget
	if e.sub != nil && e.sub != r.spec && e.sub.budget != nil {
		// The sub-agent was still running from an earlier attempt.
		tracker = e.sub.budget
	}
	tracker.setStop(r.stop)
	if d := r.limit.MaxTime; d > 0 {
		// The wall time counts from the first spawn, across restarts.
		reason := fmt.Sprintf("budget of %s wall time exhausted", d)
		if left := d - rt.clock.Now().Sub(r.spawn.spawned); left > 0 {
			defer rt.clock.AfterFunc(left, func() { tracker.exceed(reason) })()
		} else {
			tracker.exceed(reason)
		}
	}

	fin := messages.SubAgentFinished{CallID: r.callID, Child: r.child}
	ended, runErr := rt.runSub(r.ctx, e, r.task)
	var err error
	switch reason := tracker.exceededReason(); {
	case runErr != nil:
		err = fmt.Errorf("sub-agent %s failed: %w", r.child, runErr)
		fin.Outcome, fin.Result = messages.OutcomeFailed, err.Error()
	case reason != "":
		err = &BudgetError{Child: r.child, Reason: reason}
		fin.Outcome, fin.Result = messages.OutcomeLimit, err.Error()
	case ended.Outcome != messages.OutcomeCompleted:
		fin.Outcome, fin.Result = ended.Outcome, fmt.Sprintf("sub-agent %s stopped: %s", r.child, ended.Reason)
		err = errors.New(fin.Result)
	default:
		fin.Outcome, fin.Result = ended.Outcome, ended.Text
	}
	if errors.Is(runErr, ErrClosed) {
		return fin, err // the runtime stops; the session's next activation settles the sub-agent
	}
	sp, spendErr := rt.settledSpend(e)
	fin.Usage, fin.Cost, fin.RoundTrips = sp.usage, sp.cost, sp.trips
	switch {
	case spendErr != nil:
		rt.logger.Warn().Err(spendErr).Str("child", r.child).Msg("sub-agent result not reported")
		return fin, err
	case r.spawn.counted:
		if rt.passivate(e) {
			rt.system.Root.Poison(e.pid)
		}
		return fin, err
	}
	done := make(chan struct{})
	rt.system.Root.Send(r.pid, &subFinishCmd{ev: fin, e: e, reply: done})
	select {
	case <-done:
	case <-r.parent.gone:
	case <-ctx.Done():
	}
	return fin, err
}

// spawnSub sends a spawn to the spawning session of r and waits for its
// answer (see awaitSpawn).
func (rt *Runtime) spawnSub(r subRun, m *subSpawnCmd) (subSpawnReply, error) {
	m.reply = make(chan subSpawnReply, 1)
	rt.system.Root.Send(r.pid, m)
	return rt.awaitSpawn(r.parent, m.child, m.reply)
}

// awaitSpawn waits for the session of parent to answer the spawn of child.
// It waits even when the spawning call is cancelled meanwhile: the session
// may have started the sub-agent already, and then waits for its result,
// which only the run that got the answer reports (driveSub, which stops a
// cancelled run at once). Sessions answer spawns without blocking.
func (rt *Runtime) awaitSpawn(parent *entry, child string, reply <-chan subSpawnReply) (subSpawnReply, error) {
	select {
	case r := <-reply:
		return r, r.err
	case <-parent.gone:
		select {
		case r := <-reply:
			return r, r.err
		default:
		}
		return subSpawnReply{}, fmt.Errorf("%w: %s stopped before spawning %s", ErrSessionStopped, parent.id, child)
	case <-rt.ctx.Done():
		return subSpawnReply{}, ErrClosed
	}
}

// newSubRun prepares the run of a sub-agent: its spec, budget tracker and
// context.
func newSubRun(ctx context.Context, pid *actor.PID, parent *entry, callID, child, task string, limit Budget, spec *subSpec) subRun {
	runCtx, stop := context.WithCancelCause(ctx)
	return subRun{pid: pid, parent: parent, callID: callID, child: child, task: task, limit: limit, spec: spec, ctx: runCtx, stop: stop}
}

// spawnSubActor returns the function that spawns the actor of the
// sub-agent of call callID as a child of the session's actor.
func (a *sessionActor) spawnSubActor(callID string) func(*actor.Props) (*actor.PID, error) {
	return func(props *actor.Props) (*actor.PID, error) { return a.spawnChild(props, "subagent/"+callID), nil }
}
