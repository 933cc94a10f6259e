package actors

import (
	"fmt"
	"maps"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/messages"
)

// settleCmd asks for the session's status once every sub-agent spawned by
// a turn that has ended has reported its result: a cancelled turn ends at
// once, and its sub-agents, cancelled with it, report what they spent
// afterwards. Sub-agents of the running turn, and those the session runs
// outside its turns, are not waited for.
type settleCmd struct{ reply chan Status }

// onSettle handles a settleCmd.
func (a *sessionActor) onSettle(m *settleCmd) {
	a.e.settles = append(a.e.settles, m.reply)
	a.flushSettles()
}

// flushSettles answers the waiting settleCmds when no sub-agent of an ended
// turn is still to report.
func (a *sessionActor) flushSettles() {
	if len(a.e.settles) == 0 {
		return
	}
	for _, ls := range a.e.live {
		if ls.turn >= 0 && (a.turn == nil || a.turn.index != ls.turn) {
			return
		}
	}
	st := a.status()
	for _, reply := range a.e.settles {
		reply <- st
	}
	a.e.settles = nil
}

// abortOpen cancels the turn the journal left open instead of resuming it.
func (a *sessionActor) abortOpen() {
	o := a.st.Open
	t := a.newTurn(o.Turn, o.TurnID)
	t.roundTrips, t.usage, t.cost = o.RoundTrips, o.Usage, o.Cost
	a.endTurn(messages.OutcomeCancelled, "the turn that spawned this sub-agent ended")
}

// reapOrphans settles the sub-agents that the journal lists as unfinished
// and that nothing else will finish: those of a turn that ended before
// they were started, or before they reported when the process stopped. It
// runs when the session starts and when a turn ends. Each is
// activated only to cancel its open turn and report what its subtree
// spent, so that this session's usage counts every token. Sub-agents of
// the open turn are run again by its resumption, and those spawned
// outside turns (plan steps) resume when their plan runs again.
func (a *sessionActor) reapOrphans() {
	for _, child := range slices.Sorted(maps.Keys(a.st.Unfinished)) {
		sp := a.st.Unfinished[child]
		if sp.Turn < 0 || a.e.live[child] != nil || a.resumes(sp) {
			continue
		}
		a.reap(sp)
	}
}

// resumes reports whether the open turn runs the spawn of sp again.
func (a *sessionActor) resumes(sp messages.SubAgentSpawned) bool {
	o := a.st.Open
	return o != nil && o.Turn == sp.Turn && slices.ContainsFunc(o.Pending, func(c messages.ToolCall) bool { return c.ID == sp.CallID })
}

// reap activates the orphaned sub-agent of sp, and reports its result
// from a goroutine once it has settled.
func (a *sessionActor) reap(sp messages.SubAgentSpawned) {
	ag := a.rt.agents[sp.Agent]
	if ag == nil {
		ag = a.rt.agents[a.rt.defaultAgent]
	}
	spec := &subSpec{agent: ag, depth: a.depth() + 1, abort: true}
	e, err := a.rt.activateSub(sp.Child, spec, a.spawnSubActor(sp.CallID))
	if err != nil || e.sub != spec {
		// The runtime is closing, or the session runs already (opened
		// directly): a later activation settles it.
		a.log.Warn().Err(err).Str("child", sp.Child).Msg("unfinished sub-agent not settled")
		return
	}
	a.log.Info().Str("child", sp.Child).Int("turn", sp.Turn).Msg("settling a sub-agent of an ended turn")
	a.e.live[sp.Child] = &liveSub{turn: sp.Turn, e: e, reaped: true}
	go a.rt.reportReaped(a.actx.Self(), sp, e)
}

// reportReaped reports the result of a reaped sub-agent to its parent.
func (rt *Runtime) reportReaped(parent *actor.PID, sp messages.SubAgentSpawned, e *entry) {
	s, err := rt.settledSpend(e)
	if err != nil {
		return // the runtime is closing: the parent's next activation settles it
	}
	fin := messages.SubAgentFinished{CallID: sp.CallID, Child: sp.Child, Outcome: messages.OutcomeCancelled,
		Result: fmt.Sprintf("sub-agent %s stopped: the turn that spawned it ended first", sp.Child),
		Usage:  s.usage, Cost: s.cost, RoundTrips: s.trips}
	rt.system.Root.Send(parent, &subFinishCmd{ev: fin, e: e})
}
