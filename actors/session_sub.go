package actors

// This file holds the session actor's sub-agents: the parent side (a
// spawn_agent call or a TaskAgent's plan step spawns subagent/<call-id>
// as the session's child, journals SubAgentSpawned, gives it its task and
// journals its report as SubAgentFinished) and the child side (a sub-agent
// reports how its task ended, and what its subtree spent, once every
// sub-agent of its own has reported).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// SubAgents configures swarm-style sub-agents and hand-offs. The zero value
// enables neither.
type SubAgents struct {
	// Enabled gives agents the spawn_agent tool: an agent whose allow-list
	// admits "spawn_agent" (a nil allow-list admits every tool) can run a
	// task in a sub-agent session, a child of its own session with a fresh
	// context, and read its final answer as the tool's result.
	Enabled bool
	// Handoff gives agents the transfer_to_agent tool, which switches the
	// session's active agent profile mid-turn (see Session.SwitchAgent).
	Handoff bool
	// MaxDepth is how deep sub-agents may nest: a session's own sub-agents
	// are at depth 1. Zero means 3.
	MaxDepth int
	// MaxConcurrent is how many sub-agents one session runs at once; further
	// spawns wait for a slot. Zero means 8.
	MaxConcurrent int
	// Budget bounds every sub-agent subtree; a spawn may ask for less, never
	// for more, and never for more than its parent's remaining budget. The
	// zero value bounds nothing.
	Budget Budget
}

func (s SubAgents) withDefaults() SubAgents {
	if s.MaxDepth <= 0 {
		s.MaxDepth = 3
	}
	if s.MaxConcurrent <= 0 {
		s.MaxConcurrent = 8
	}
	return s
}

// subTaskTurnID is the turn id of a sub-agent's task: a sub-agent session
// runs one task, so giving it again after a crash follows the same turn.
const subTaskTurnID = "task"

// subSpec is what makes a session a sub-agent: the agent it plays, its
// depth and the budget of its subtree. Its carry keeps it across restarts.
type subSpec struct {
	agent  *agent
	depth  int
	budget *budgetTracker
	// reap makes the session cancel the turn its journal left open
	// instead of resuming it, and report what it spent: the turn that
	// spawned it ended while it ran.
	reap bool
}

// spawnReq is a sub-agent to run: for a spawn_agent call of the running
// turn, or for a plan step.
type spawnReq struct {
	// turn is the spawning turn, or -1 for a plan step (run outside the
	// session's turns).
	turn   int
	callID string
	child  string
	task   string
	spec   *subSpec
	limit  Budget
	// known says that the child's journal exists: a plan step that the
	// session's journal no longer lists as unfinished has finished before,
	// and its usage is counted.
	known bool
	// run is the spawn_agent call that waits for the result; nil for a
	// plan step.
	run *toolRun
}

// liveSub is a sub-agent the session waits for.
type liveSub struct {
	child string
	turn  int // the spawning turn, -1 for a plan step
	req   *spawnReq
	ref   *sessionRef
	// sp is the journaled spawn of a reaped sub-agent (req is nil).
	sp     messages.SubAgentSpawned
	reaped bool
	// counted says that the journal counts the sub-agent's result already.
	counted bool
	// cancel is why the sub-agent was told to stop before its actor
	// existed; wall disarms its wall-time timer.
	cancel string
	wall   func() bool
}

func (ls *liveSub) disarm() {
	if ls.wall != nil {
		ls.wall()
		ls.wall = nil
	}
}

// planStepCmd runs a plan step of a TaskAgent as a sub-agent of the
// session, outside its turns, and answers with how it finished.
type planStepCmd struct {
	callID string
	child  string
	task   string
	spec   *subSpec
	limit  Budget
	known  bool
	reply  chan stepResult // buffered (1)
}

// stepResult is how a plan step's sub-agent finished; err is nil when it
// completed.
type stepResult struct {
	fin messages.SubAgentFinished
	err error
}

// stepCancelCmd stops the sub-agent of a plan step whose TaskAgent gave up
// waiting.
type stepCancelCmd struct {
	child  string
	reason string
}

// settleCmd asks for the session's status once every sub-agent spawned by
// a turn that has ended has reported its result: a cancelled turn ends at
// once, and its sub-agents, cancelled with it, report what they spent
// afterwards. Sub-agents of the running turn, and plan steps, are not
// waited for.
type settleCmd struct{ reply chan Status }

// subReport is a sub-agent's report to its parent: how its task ended
// (nil for a sub-agent activated only to settle) and what its subtree
// spent.
type subReport struct {
	child string
	ended *messages.TurnEnded
	spend spend
}

// taskReport is a sub-agent's account of its task for its parent.
type taskReport struct {
	ended *messages.TurnEnded // how the task turn ended; nil while it runs
	ready bool                // report without a task turn (reap)
	sent  bool
}

// childSessionID is the id of the sub-agent that call callID of session
// parent spawns: deterministic, so that after a crash the same child
// session, and its journal, is found again.
func childSessionID(parent, callID string) string {
	id := parent + ":sub:" + callID
	if memory.ValidateSession(id) == nil {
		return id
	}
	sum := sha256.Sum256([]byte(parent + "\x00" + callID))
	short := parent
	if len(short) > 200 {
		short = short[:200]
	}
	return short + ":sub:" + hex.EncodeToString(sum[:12])
}

// spawn runs req's sub-agent now, or once a slot is free.
func (a *sessionActor) spawn(req *spawnReq) {
	if a.activeSubs() >= a.rt.swarm.MaxConcurrent {
		a.waiting = append(a.waiting, req)
		return
	}
	a.startSub(req)
}

// activeSubs counts the sub-agents that hold a slot.
func (a *sessionActor) activeSubs() int {
	n := 0
	for _, ls := range a.live {
		if !ls.reaped {
			n++
		}
	}
	return n
}

// startWaiting starts waiting spawns while slots are free.
func (a *sessionActor) startWaiting() {
	for len(a.waiting) > 0 && a.activeSubs() < a.rt.swarm.MaxConcurrent {
		req := a.waiting[0]
		a.waiting[0] = nil
		a.waiting = a.waiting[1:]
		a.startSub(req)
	}
}

// dropWaitingSpawns forgets the waiting spawns of turn: it ended before
// they started.
func (a *sessionActor) dropWaitingSpawns(turn int) {
	a.waiting = slices.DeleteFunc(a.waiting, func(r *spawnReq) bool { return r.turn == turn })
}

// startSub journals the spawn of req's sub-agent (unless its journal says
// it resumes, or a plan step's result is counted already), spawns its
// actor as the session's child once that is durable, and gives it its
// task under its budget.
func (a *sessionActor) startSub(req *spawnReq) {
	sp, unfinished := a.st.Unfinished[req.child]
	counted := false
	switch {
	case unfinished:
		// It resumes from its own journal.
	case req.turn >= 0 || !req.known:
		sp = messages.SubAgentSpawned{Turn: req.turn, CallID: req.callID, Child: req.child, Agent: req.spec.agent.Name, Task: req.task, At: a.rt.clock.Now()}
		a.stage(sp)
	default:
		counted = true
	}
	spawned := sp.At
	if spawned.IsZero() {
		spawned = a.rt.clock.Now()
	}
	a.publish(messages.SubAgentStarted{EventMeta: a.meta(), CallID: req.callID, Child: req.child, Agent: req.spec.agent.Name, Depth: req.spec.depth})
	ls := &liveSub{child: req.child, turn: req.turn, req: req, ref: newSessionRef(req.child, true), counted: counted}
	a.addLive(ls)
	a.after(func() {
		if err := a.spawnSubActor(ls, req.callID, req.spec); err != nil {
			a.subFinished(ls, nil, spend{}, fmt.Errorf("was not started: %w", err))
			return
		}
		tracker, root, pid := req.spec.budget, a.rt.system.Root, ls.ref.pid
		// The budget's stop and wall-time timer are in place before the
		// task reaches the sub-agent, so that no step of it runs unbounded.
		tracker.setStop(func(err error) { root.Send(pid, &cancelCmd{reason: err.Error()}) })
		spent := ""
		if d := req.limit.MaxTime; d > 0 {
			// The wall time counts from the first spawn, across restarts.
			reason := fmt.Sprintf("budget of %s wall time exhausted", d)
			if left := d - a.rt.clock.Now().Sub(spawned); left > 0 {
				ls.wall = a.rt.clock.AfterFunc(left, func() { tracker.exceed(reason) })
			} else {
				spent = reason
			}
		}
		root.Send(pid, &submitCmd{turnID: subTaskTurnID, msg: messages.UserText(req.task), task: true, parent: req.run.spanContext()})
		if spent != "" {
			// Spent already (a restart after the deadline): the cancel
			// follows the task it stops.
			tracker.exceed(spent)
		}
		if ls.cancel != "" {
			root.Send(pid, &cancelCmd{reason: ls.cancel})
		}
	})
}

// spawnSubActor spawns the actor of a sub-agent session as the session's
// child subagent/<callID>, and enters it in the runtime's directory.
func (a *sessionActor) spawnSubActor(ls *liveSub, callID string, spec *subSpec) error {
	props := a.rt.sessionProps(newCarry(a.rt, ls.ref, spec))
	return a.rt.register(ls.ref, func() *actor.PID { return a.spawnChild(props, "subagent/"+callID) })
}

// stopSub tells the sub-agent child to stop its task for reason; it
// reports what it spent as it stops.
func (a *sessionActor) stopSub(child, reason string) {
	ls := a.live[child]
	if ls == nil {
		return
	}
	if ls.ref.pid == nil {
		ls.cancel = reason
		return
	}
	a.actx.Send(ls.ref.pid, &cancelCmd{reason: reason})
}

// onSubReport handles a sub-agent's report.
func (a *sessionActor) onSubReport(m *subReport) {
	if ls := a.live[m.child]; ls != nil {
		a.subFinished(ls, m.ended, m.spend, nil)
	}
}

// onTerminated handles the stop of a child: a sub-agent that stopped
// without reporting (its restart budget ran out, its journal failed) is
// finished with what its journal says it spent.
func (a *sessionActor) onTerminated(m *actor.Terminated) {
	ls := a.subFor(m.Who)
	if ls == nil {
		return
	}
	sp, err := a.rt.journaledSpend(ls.child)
	if err != nil {
		a.log.Warn().Err(err).Str("child", ls.child).Msg("spend of a stopped sub-agent unknown")
	}
	a.subFinished(ls, nil, sp, ls.ref.stopped())
}

// subFor returns the sub-agent whose actor is pid, nil when none is.
func (a *sessionActor) subFor(pid *actor.PID) *liveSub {
	for _, ls := range a.live {
		if ls.ref.pid != nil && ls.ref.pid.Equal(pid) {
			return ls
		}
	}
	return nil
}

// subFinished journals how the sub-agent of ls finished (unless the
// journal counts it already), stops its actor and hands its result to the
// spawn_agent call or the plan step that waits for it. ended is how its
// task ended, nil when it did not end (runErr says why) or when it was
// reaped.
func (a *sessionActor) subFinished(ls *liveSub, ended *messages.TurnEnded, sp spend, runErr error) {
	delete(a.live, ls.child)
	ls.disarm()
	callID := ls.sp.CallID
	if ls.req != nil {
		callID = ls.req.callID
	}
	fin := messages.SubAgentFinished{CallID: callID, Child: ls.child, Usage: sp.usage, Cost: sp.cost, RoundTrips: sp.trips}
	var err error
	if ls.reaped {
		fin.Outcome = messages.OutcomeCancelled
		fin.Result = fmt.Sprintf("sub-agent %s stopped: the turn that spawned it ended first", ls.child)
	} else {
		if runErr == nil && ended == nil {
			runErr = errors.New("it stopped before its task ended")
		}
		switch reason := ls.req.spec.budget.exceededReason(); {
		case runErr != nil:
			err = fmt.Errorf("sub-agent %s failed: %w", ls.child, runErr)
			fin.Outcome, fin.Result = messages.OutcomeFailed, err.Error()
		case reason != "":
			err = &budgetError{child: ls.child, reason: reason}
			fin.Outcome, fin.Result = messages.OutcomeLimit, err.Error()
		case ended.Outcome != messages.OutcomeCompleted:
			fin.Outcome, fin.Result = ended.Outcome, fmt.Sprintf("sub-agent %s stopped: %s", ls.child, ended.Reason)
			err = errors.New(fin.Result)
		default:
			fin.Outcome, fin.Result = ended.Outcome, ended.Text
		}
	}
	if _, owed := a.st.Unfinished[ls.child]; owed && !ls.counted {
		a.stage(fin)
		if ls.reaped {
			// Nothing charged the reaped subtree to this session's budget.
			a.chargeBudget(fin.Usage, fin.Cost, fin.RoundTrips)
		}
		a.publish(messages.SubAgentEnded{EventMeta: a.meta(), CallID: fin.CallID, Child: fin.Child, Outcome: fin.Outcome, Usage: fin.Usage, Cost: fin.Cost})
		a.publish(messages.UsageReported{EventMeta: a.meta(), Model: "subagent:" + fin.Child, Usage: fin.Usage, Cost: fin.Cost,
			SessionUsage: a.st.Usage, SessionCost: a.st.Cost})
	}
	if ref := ls.ref; ref.pid != nil {
		// The sub-agent leaves the directory at once: running the same
		// child again (a plan run again) must not find it there.
		a.after(func() {
			a.rt.forget(ref)
			a.actx.Stop(ref.pid)
		})
	}
	switch {
	case ls.req == nil:
	case ls.req.run != nil:
		if t := a.turn; t != nil && t.running[ls.req.run.call.ID] == ls.req.run {
			a.completeTool(ls.req.run, finishedResult(fin, false))
		}
	default:
		if step := a.c.steps[ls.child]; step != nil {
			delete(a.c.steps, ls.child)
			res := stepResult{fin: fin, err: err}
			a.after(func() { step.reply <- res })
		}
	}
	a.startWaiting()
	a.flushSettles()
	a.maybeReport()
}

// onPlanStep runs a plan step as a sub-agent.
func (a *sessionActor) onPlanStep(m *planStepCmd) {
	if a.c.steps == nil {
		a.c.steps = make(map[string]*planStepCmd)
	}
	a.c.steps[m.child] = m
	a.spawn(stepReq(m))
}

func stepReq(m *planStepCmd) *spawnReq {
	return &spawnReq{turn: -1, callID: m.callID, child: m.child, task: m.task, spec: m.spec, limit: m.limit, known: m.known}
}

// rerunSteps runs again the plan steps whose sub-agents stopped with the
// actor's previous instance: they resume from their journals.
func (a *sessionActor) rerunSteps() {
	if len(a.c.steps) == 0 {
		return
	}
	for _, child := range slices.Sorted(maps.Keys(a.c.steps)) {
		if a.live[child] == nil {
			a.spawn(stepReq(a.c.steps[child]))
		}
	}
}

// onStepCancel stops a plan step whose TaskAgent stopped waiting.
func (a *sessionActor) onStepCancel(m *stepCancelCmd) {
	a.waiting = slices.DeleteFunc(a.waiting, func(r *spawnReq) bool { return r.turn < 0 && r.child == m.child })
	if step := a.c.steps[m.child]; step != nil && a.live[m.child] == nil {
		delete(a.c.steps, m.child)
		step.reply <- stepResult{err: errors.New(m.reason)}
	}
	a.stopSub(m.child, m.reason)
}

// cancelDetached stops the sub-agents the session runs outside its turns
// (plan steps), and reports whether there were any.
func (a *sessionActor) cancelDetached(reason string) bool {
	stopped := false
	for _, ls := range a.live {
		if ls.turn < 0 && !ls.reaped {
			a.stopSub(ls.child, reason)
			stopped = true
		}
	}
	a.waiting = slices.DeleteFunc(a.waiting, func(r *spawnReq) bool {
		if r.turn >= 0 {
			return false
		}
		if step := a.c.steps[r.child]; step != nil {
			delete(a.c.steps, r.child)
			step.reply <- stepResult{err: errors.New(reason)}
		}
		stopped = true
		return true
	})
	return stopped
}

// settled reports whether every sub-agent of an ended turn has reported.
func (a *sessionActor) settled() bool {
	for _, ls := range a.live {
		if ls.turn >= 0 && (a.turn == nil || a.turn.index != ls.turn) {
			return false
		}
	}
	return true
}

// flushSettles answers the waiting settleCmds once settled, when what was
// journaled for the sub-agents is durable.
func (a *sessionActor) flushSettles() {
	if len(a.c.settles) == 0 || !a.settled() {
		return
	}
	st, replies := a.status(), a.c.settles
	a.c.settles = nil
	a.after(func() {
		for _, r := range replies {
			r <- st
		}
	})
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
// runs when the session starts and when a turn ends. Each is activated
// only to cancel its open turn and report what its subtree spent, so that
// this session's usage counts every token. Sub-agents of the open turn are
// run again by its resumption, and plan steps resume when their plan runs
// again.
func (a *sessionActor) reapOrphans() {
	if len(a.st.Unfinished) == 0 {
		return // nothing to sort: most turns spawn no sub-agent
	}
	for _, child := range slices.Sorted(maps.Keys(a.st.Unfinished)) {
		sp := a.st.Unfinished[child]
		if sp.Turn < 0 || a.live[child] != nil || a.resumes(sp) {
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

// reap activates the orphaned sub-agent of sp to settle it.
func (a *sessionActor) reap(sp messages.SubAgentSpawned) {
	ag := a.rt.agents[sp.Agent]
	if ag == nil {
		ag = a.rt.agents[a.rt.defaultAgent]
	}
	spec := &subSpec{agent: ag, depth: a.depth() + 1, reap: true}
	ls := &liveSub{child: sp.Child, turn: sp.Turn, sp: sp, ref: newSessionRef(sp.Child, true), reaped: true}
	a.addLive(ls)
	a.log.Info().Str("child", sp.Child).Int("turn", sp.Turn).Msg("settling a sub-agent of an ended turn")
	a.after(func() {
		if err := a.spawnSubActor(ls, sp.CallID, spec); err != nil {
			// The runtime is closing, or the session runs already
			// (opened directly): a later activation settles it.
			a.log.Warn().Err(err).Str("child", sp.Child).Msg("unfinished sub-agent not settled")
			delete(a.live, sp.Child)
			a.flushSettles()
		}
	})
}

// chargeBudget charges trips model calls to the sub-agent's subtree budgets
// and returns the reason when the session's own budget is spent.
func (a *sessionActor) chargeBudget(u messages.Usage, cost float64, trips int) string {
	if a.c.spec == nil || a.c.spec.budget == nil {
		return ""
	}
	return a.c.spec.budget.charge(u, cost, trips)
}

// subAgentFor returns the agent a sub-agent session plays while it has not
// switched profiles, nil otherwise.
func (a *sessionActor) subAgentFor(name string) *agent {
	if s := a.c.spec; s != nil && (name == "" || name == s.agent.Name) {
		return s.agent
	}
	return nil
}

// depth is the session's depth in its sub-agent tree (0 at the top).
func (a *sessionActor) depth() int {
	if a.c.spec == nil {
		return 0
	}
	return a.c.spec.depth
}

// watchTask starts the account of the task a parent gives its sub-agent.
func (a *sessionActor) watchTask(cmd *submitCmd) {
	if cmd.task && a.c.task == nil {
		a.c.task = &taskReport{}
	}
}

// turnEnded records the end of a sub-agent's task turn for its report.
func (a *sessionActor) turnEnded(ended messages.TurnEnded) {
	if r := a.c.task; r != nil && !r.sent && ended.TurnID == subTaskTurnID {
		r.ended = &ended
	}
	a.maybeReport()
}

// taskEnded records how a sub-agent's task turn ended before its parent
// gave it again (it resumed after a crash).
func (a *sessionActor) taskEnded(cmd *submitCmd, ended messages.TurnEnded) {
	if !cmd.task {
		return
	}
	a.watchTask(cmd)
	if r := a.c.task; !r.sent {
		r.ended = &ended
	}
	a.maybeReport()
}

// maybeReport sends a sub-agent's report to its parent once its task has
// ended and every sub-agent of its own has reported, when that is
// durable.
func (a *sessionActor) maybeReport() {
	r := a.c.task
	if r == nil || r.sent || (r.ended == nil && !r.ready) || a.turn != nil && r.ended == nil || !a.settled() {
		return
	}
	r.sent = true
	st := a.status()
	rep := &subReport{child: a.id, ended: r.ended, spend: spend{st.Usage, st.Cost, st.RoundTrips}}
	parent := a.actx.Parent()
	a.after(func() { a.actx.Send(parent, rep) })
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
