package actors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
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

// Budget bounds what a sub-agent and everything it spawns may spend. A zero
// field bounds nothing.
type Budget struct {
	// MaxTokens is the subtree's total token budget.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// MaxCost is the subtree's cost budget, in the price table's currency.
	MaxCost float64 `json:"max_cost,omitempty"`
	// MaxTime is the sub-agent's wall-clock time, from its spawn.
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

// subSpec is what makes a session a sub-agent: the agent it plays, its
// depth and the budget of its subtree. It lives on the session's entry, so
// that a restarted actor keeps it.
type subSpec struct {
	agent  *agent
	depth  int
	budget *budgetTracker
}

// budgetTracker counts what a sub-agent subtree spends, for every model
// call of every session in it, and stops the subtree once it has spent its
// budget. Trackers form a chain up to the top-level sub-agent, so a model
// call is charged to every enclosing subtree.
type budgetTracker struct {
	parent *budgetTracker
	child  string
	limit  Budget

	mu       sync.Mutex
	usage    messages.Usage
	cost     float64
	trips    int
	exceeded string
	stop     context.CancelCauseFunc
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

// setStop arms the function that stops the subtree.
func (b *budgetTracker) setStop(stop context.CancelCauseFunc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stop = stop
}

// preload counts what the subtree spent before this tracker existed (a
// sub-agent resumed after a crash).
func (b *budgetTracker) preload(u messages.Usage, cost float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.usage, b.cost = u, cost
}

// charge counts one model call in every enclosing subtree. It stops each
// subtree whose budget is spent, and returns the reason when b's own is.
func (b *budgetTracker) charge(u messages.Usage, cost float64) string {
	var own string
	for t := b; t != nil; t = t.parent {
		if reason := t.add(u, cost); reason != "" && t == b {
			own = reason
		}
	}
	return own
}

func (b *budgetTracker) add(u messages.Usage, cost float64) string {
	b.mu.Lock()
	b.usage = b.usage.Add(u)
	b.cost += cost
	b.trips++
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
		stop(&BudgetError{Child: b.child, Reason: reason})
	}
	return reason
}

// exceed stops the subtree for reason (its wall time ran out).
func (b *budgetTracker) exceed(reason string) {
	b.mu.Lock()
	stop := b.exceedLocked(reason)
	b.mu.Unlock()
	if stop != nil {
		stop(&BudgetError{Child: b.child, Reason: reason})
	}
}

// exceedLocked records the first reason and returns the stop function to
// call for it, nil when there is nothing to do.
func (b *budgetTracker) exceedLocked(reason string) context.CancelCauseFunc {
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

// swarm holds the runtime's sub-agent configuration, its built-in tools and
// the per-session slots of concurrent sub-agents.
type swarm struct {
	cfg   SubAgents
	tools map[string]toolsys.Tool
	order []string

	mu    sync.Mutex
	slots map[string]*slots
}

type slots struct {
	users int
	ch    chan struct{}
}

// configureSwarm registers the built-in tools Config.SubAgents enables.
func (rt *Runtime) configureSwarm() error {
	sw := &swarm{cfg: rt.cfg.SubAgents.withDefaults(), tools: map[string]toolsys.Tool{}, slots: map[string]*slots{}}
	rt.swarm = sw
	var tools []toolsys.Tool
	if sw.cfg.Enabled {
		tools = append(tools, toolsys.Bridge[SpawnAgentParams](&spawnTool{rt: rt}))
	}
	if sw.cfg.Handoff {
		tools = append(tools, toolsys.Bridge[TransferParams](&transferTool{rt: rt}))
	}
	for _, t := range tools {
		if rt.cfg.Tools != nil {
			if _, taken := rt.cfg.Tools.Get(t.Name()); taken {
				return configErr("SubAgents", "the tool %q is already registered in Tools", t.Name())
			}
		}
		sw.tools[t.Name()] = t
		sw.order = append(sw.order, t.Name())
	}
	return nil
}

// tool returns the built-in tool called name.
func (sw *swarm) tool(name string) (toolsys.Tool, bool) {
	if sw == nil {
		return nil, false
	}
	t, ok := sw.tools[name]
	return t, ok
}

// definitions describes the built-in tools the agent may call.
func (sw *swarm) definitions(a *agent) []messages.ToolDefinition {
	if sw == nil {
		return nil
	}
	var defs []messages.ToolDefinition
	for _, name := range sw.order {
		if t := sw.tools[name]; a.allowed(name) {
			defs = append(defs, messages.ToolDefinition{Name: name, Description: t.Description(), Parameters: t.Schema()})
		}
	}
	return defs
}

// acquire waits for one of session's sub-agent slots.
func (sw *swarm) acquire(ctx context.Context, session string) (release func(), err error) {
	sw.mu.Lock()
	s := sw.slots[session]
	if s == nil {
		s = &slots{ch: make(chan struct{}, sw.cfg.MaxConcurrent)}
		sw.slots[session] = s
	}
	s.users++
	sw.mu.Unlock()
	done := func() {
		sw.mu.Lock()
		defer sw.mu.Unlock()
		if s.users--; s.users == 0 {
			delete(sw.slots, session)
		}
	}
	select {
	case s.ch <- struct{}{}:
		return func() { <-s.ch; done() }, nil
	case <-ctx.Done():
		done()
		return nil, context.Cause(ctx)
	}
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

// activateSub returns the live entry of sub-agent session id, spawning its
// actor with spawn (as a child of the parent session's actor, or of the
// root for a task agent's steps) when none runs.
func (rt *Runtime) activateSub(id string, spec *subSpec, spawn func(*actor.Props) (*actor.PID, error)) (*entry, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return nil, ErrClosed
	}
	if e := rt.entries[id]; e != nil {
		return e, nil
	}
	e := newEntry(id)
	e.sub = spec
	pid, err := spawn(actor.PropsFromProducer(func() actor.Actor { return newSessionActor(rt, e) }))
	if err != nil {
		return nil, fmt.Errorf("actors: spawn sub-agent %s: %w", id, err)
	}
	e.pid = pid
	rt.entries[id] = e
	return e, nil
}

// sendEntry delivers msg to the actor of e, and to no other activation: a
// sub-agent is reached through its parent's actor tree only.
func (rt *Runtime) sendEntry(e *entry, msg any) {
	if cmd, ok := msg.(*submitCmd); ok {
		e.mu.Lock()
		e.pending = append(e.pending, cmd)
		e.mu.Unlock()
	}
	rt.system.Root.Send(e.pid, msg)
}

// subOutcome is how a sub-agent's task ended.
type subOutcome struct {
	ended messages.TurnEnded
	usage messages.Usage // the subtree's
	cost  float64
}

// subTaskTurnID is the turn id of a sub-agent's task: a sub-agent session
// runs one task, so resubmitting it after a crash follows the same turn.
const subTaskTurnID = "task"

// runSub runs task as the turn of sub-agent e and waits for it to end. When
// ctx is cancelled first, the turn is cancelled with ctx's cause and runSub
// waits for it to end. It returns the subtree's usage.
func (rt *Runtime) runSub(ctx context.Context, e *entry, task string) (subOutcome, error) {
	var out subOutcome
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
			return out, ErrClosed
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
		return out, err
	}
	out.ended = ended
	reply := make(chan Status, 1)
	rt.system.Root.Send(e.pid, &statusCmd{reply: reply})
	select {
	case st := <-reply:
		out.usage, out.cost = st.Usage, st.Cost
	case <-e.gone:
		out.usage, out.cost = ended.Usage, ended.Cost
	case <-rt.ctx.Done():
		return out, ErrClosed
	}
	return out, nil
}

// subSpawnCmd asks a session to journal the spawn of a sub-agent (unless
// the journal already holds it) and to start the sub-agent's actor as its
// child. A spawn whose result the journal holds is answered with it.
type subSpawnCmd struct {
	turn   int
	callID string
	child  string
	task   string
	spec   *subSpec
	reply  chan subSpawnReply
}

type subSpawnReply struct {
	finished *messages.SubAgentFinished
	e        *entry
	err      error
}

// subFinishCmd asks a session to journal the result of its sub-agent and to
// stop the sub-agent's actor.
type subFinishCmd struct {
	ev    messages.SubAgentFinished
	e     *entry
	reply chan struct{} // may be nil
}

// onSubSpawn handles a subSpawnCmd.
func (a *sessionActor) onSubSpawn(m *subSpawnCmd) {
	if a.turn == nil || a.turn.index != m.turn {
		m.reply <- subSpawnReply{err: fmt.Errorf("actors: spawn %s: turn %d is over", m.child, m.turn)}
		return
	}
	if sa, ok := a.st.Open.SubAgents[m.callID]; ok && sa.Finished != nil {
		fin := *sa.Finished
		m.reply <- subSpawnReply{finished: &fin}
		return
	}
	if _, ok := a.st.Open.SubAgents[m.callID]; !ok {
		a.appendEvents(messages.SubAgentSpawned{Turn: m.turn, CallID: m.callID, Child: m.child, Agent: m.spec.agent.Name, Task: m.task})
	}
	a.publish(messages.SubAgentStarted{EventMeta: a.meta(), CallID: m.callID, Child: m.child, Agent: m.spec.agent.Name, Depth: m.spec.depth})
	e, err := a.rt.activateSub(m.child, m.spec, func(props *actor.Props) (*actor.PID, error) {
		return a.spawnChild(props, "subagent/"+m.callID), nil
	})
	m.reply <- subSpawnReply{e: e, err: err}
}

// onSubFinish handles a subFinishCmd. The result is journaled even when the
// turn that spawned the sub-agent has ended (it was cancelled), so that the
// session's usage counts the subtree.
func (a *sessionActor) onSubFinish(m *subFinishCmd) {
	a.appendEvents(m.ev)
	a.publish(messages.SubAgentEnded{EventMeta: a.meta(), CallID: m.ev.CallID, Child: m.ev.Child, Outcome: m.ev.Outcome, Usage: m.ev.Usage, Cost: m.ev.Cost})
	a.publish(messages.UsageReported{EventMeta: a.meta(), Model: "subagent:" + m.ev.Child, Usage: m.ev.Usage, Cost: m.ev.Cost,
		SessionUsage: a.st.Usage, SessionCost: a.st.Cost})
	if m.e != nil && a.rt.passivate(m.e) {
		a.actx.Poison(m.e.pid)
	}
	if m.reply != nil {
		close(m.reply)
	}
}

// onStoppedSub forgets a sub-agent whose actor stopped (finished, or
// stopped with its parent) and ends the streams still waiting on it.
func (a *sessionActor) onStoppedSub() {
	if a.e.sub == nil {
		return
	}
	a.rt.mu.Lock()
	if a.rt.entries[a.id] == a.e {
		delete(a.rt.entries, a.id)
	}
	a.rt.mu.Unlock()
	err := fmt.Errorf("%w: sub-agent %s stopped", ErrSessionStopped, a.id)
	for _, cmd := range a.e.takePending() {
		cmd.sub.fail(err)
	}
	a.e.hub.failAll(err)
}

// isSubAgent reports whether child is the actor of one of the session's
// sub-agents.
func (a *sessionActor) isSubAgent(child *actor.PID) bool {
	a.rt.mu.Lock()
	defer a.rt.mu.Unlock()
	for _, e := range a.rt.entries {
		if e.sub != nil && e.pid != nil && e.pid.Equal(child) {
			return true
		}
	}
	return false
}

// chargeBudget charges one model call to the sub-agent's subtree budgets and
// returns the reason when the session's own budget is spent.
func (a *sessionActor) chargeBudget(u messages.Usage, cost float64) string {
	if a.e.sub == nil || a.e.sub.budget == nil {
		return ""
	}
	return a.e.sub.budget.charge(u, cost)
}

// subAgentFor returns the agent a sub-agent session plays while it has not
// switched profiles, nil otherwise.
func (a *sessionActor) subAgentFor(name string) *agent {
	if s := a.e.sub; s != nil && (name == "" || name == s.agent.Name) {
		return s.agent
	}
	return nil
}

// depth is the session's depth in its sub-agent tree (0 at the top).
func (a *sessionActor) depth() int {
	if a.e.sub == nil {
		return 0
	}
	return a.e.sub.depth
}
