package actors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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

// subSpec is what makes a session a sub-agent: the agent it plays, its
// depth and the budget of its subtree. It lives on the session's entry, so
// that a restarted actor keeps it.
type subSpec struct {
	agent  *agent
	depth  int
	budget *budgetTracker
	// abort makes the session cancel the turn its journal left open
	// instead of resuming it: the turn that spawned it ended while it ran,
	// and it is activated only to settle what it spent.
	abort bool
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
	loaded   bool
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

// setStop arms the function that stops the subtree, and calls it at once
// when the budget is already spent.
func (b *budgetTracker) setStop(stop context.CancelCauseFunc) {
	b.mu.Lock()
	b.stop = stop
	reason := b.exceeded
	b.mu.Unlock()
	if reason != "" {
		stop(&BudgetError{Child: b.child, Reason: reason})
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

// subSpawnCmd asks a session to journal the spawn of a sub-agent (unless
// the journal already holds it) and to start the sub-agent's actor as its
// child. A spawn whose result the journal holds is answered with it.
type subSpawnCmd struct {
	// turn is the spawning turn, or -1 for a sub-agent the session runs
	// outside its turns (a task agent's plan step).
	turn   int
	callID string
	child  string
	task   string
	spec   *subSpec
	// known says that the child's journal exists: a sub-agent spawned
	// outside turns that the session's journal no longer lists as
	// unfinished has finished before, and its usage is counted.
	known bool
	// stop cancels the sub-agent's run (Session.Cancel stops the
	// sub-agents spawned outside turns with it).
	stop  context.CancelCauseFunc
	reply chan subSpawnReply
}

type subSpawnReply struct {
	finished *messages.SubAgentFinished
	e        *entry
	// spawned is when the sub-agent was first spawned.
	spawned time.Time
	// counted says that the session's journal already counts the
	// sub-agent's result: it must not be reported again.
	counted bool
	err     error
}

// subFinishCmd asks a session to journal the result of its sub-agent and to
// stop the sub-agent's actor.
type subFinishCmd struct {
	ev    messages.SubAgentFinished
	e     *entry
	reply chan struct{} // may be nil
}

// liveSub is a sub-agent whose result the session waits for.
type liveSub struct {
	turn   int // the spawning turn, -1 outside turns
	e      *entry
	stop   context.CancelCauseFunc // nil for a reaped sub-agent
	reaped bool                    // activated by reapOrphans, with no budget tracker
}

// onSubSpawn handles a subSpawnCmd.
func (a *sessionActor) onSubSpawn(m *subSpawnCmd) {
	if m.turn >= 0 && (a.turn == nil || a.turn.index != m.turn) {
		m.reply <- subSpawnReply{err: fmt.Errorf("actors: spawn %s: turn %d is over", m.child, m.turn)}
		return
	}
	if o := a.st.Open; m.turn >= 0 && o != nil {
		if sa, ok := o.SubAgents[m.callID]; ok && sa.Finished != nil {
			fin := *sa.Finished
			m.reply <- subSpawnReply{finished: &fin}
			return
		}
	}
	sp, unfinished := a.st.Unfinished[m.child]
	counted := false
	switch {
	case unfinished:
		// It resumes from its own journal.
	case m.turn >= 0 || !m.known:
		sp = messages.SubAgentSpawned{Turn: m.turn, CallID: m.callID, Child: m.child, Agent: m.spec.agent.Name, Task: m.task, At: a.rt.clock.Now()}
		a.appendEvents(sp)
	default:
		counted = true
	}
	spawned := sp.At
	if spawned.IsZero() {
		spawned = a.rt.clock.Now()
	}
	a.publish(messages.SubAgentStarted{EventMeta: a.meta(), CallID: m.callID, Child: m.child, Agent: m.spec.agent.Name, Depth: m.spec.depth})
	e, err := a.rt.activateSub(m.child, m.spec, a.spawnSubActor(m.callID))
	if err == nil && !counted {
		a.e.live[m.child] = &liveSub{turn: m.turn, e: e, stop: m.stop}
	}
	m.reply <- subSpawnReply{e: e, spawned: spawned, counted: counted, err: err}
}

// onSubFinish handles a subFinishCmd. The result is journaled even when the
// turn that spawned the sub-agent has ended (it was cancelled), so that the
// session's usage counts the subtree, and only once: a result the journal
// holds already is not journaled again.
func (a *sessionActor) onSubFinish(m *subFinishCmd) {
	ls := a.e.live[m.ev.Child]
	delete(a.e.live, m.ev.Child)
	if _, owed := a.st.Unfinished[m.ev.Child]; owed {
		a.appendEvents(m.ev)
		if ls != nil && ls.reaped {
			// Nothing charged the reaped subtree to this session's budget.
			a.chargeBudget(m.ev.Usage, m.ev.Cost, m.ev.RoundTrips)
		}
		a.publish(messages.SubAgentEnded{EventMeta: a.meta(), CallID: m.ev.CallID, Child: m.ev.Child, Outcome: m.ev.Outcome, Usage: m.ev.Usage, Cost: m.ev.Cost})
		a.publish(messages.UsageReported{EventMeta: a.meta(), Model: "subagent:" + m.ev.Child, Usage: m.ev.Usage, Cost: m.ev.Cost,
			SessionUsage: a.st.Usage, SessionCost: a.st.Cost})
	}
	if m.e != nil && a.rt.passivate(m.e) {
		a.actx.Poison(m.e.pid)
	}
	if m.reply != nil {
		close(m.reply)
	}
	a.flushSettles()
}

// cancelDetached stops the sub-agents the session runs outside its turns,
// and reports whether there were any.
func (a *sessionActor) cancelDetached(reason string) bool {
	stopped := false
	for _, ls := range a.e.live {
		if ls.turn < 0 && ls.stop != nil {
			ls.stop(errors.New(reason))
			stopped = true
		}
	}
	return stopped
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

// chargeBudget charges trips model calls to the sub-agent's subtree budgets
// and returns the reason when the session's own budget is spent.
func (a *sessionActor) chargeBudget(u messages.Usage, cost float64, trips int) string {
	if a.e.sub == nil || a.e.sub.budget == nil {
		return ""
	}
	return a.e.sub.budget.charge(u, cost, trips)
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
