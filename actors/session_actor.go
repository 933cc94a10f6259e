package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/supervisor"
)

// sessionActor owns one session: it folds its journal into a State,
// journals every fact before acting on it, and runs turns by spawning a
// model-call child per round trip and a tool-executor child per tool call.
// Its mailbox never waits on a model or a tool; the journal append is the
// only I/O it does itself, because the journal comes first.
type sessionActor struct {
	rt    *Runtime
	e     *entry
	id    string
	log   zerolog.Logger
	actx  actor.Context
	st    *memory.State
	tail  uint64
	turn  *turnRun
	queue []*submitCmd

	batch *journalBatch // facts staged for one append, nil when none is open

	toolStrategy actor.SupervisorStrategy
	compacting   bool
	breaker      memory.Breaker

	// instance numbers this actor instance among the runtime's; activity
	// counts the messages it handled, for the idle timer; idleStop disarms
	// that timer.
	instance uint64
	activity uint64
	idleStop func() bool
}

var (
	_ actor.Actor              = (*sessionActor)(nil)
	_ actor.SupervisorStrategy = (*sessionActor)(nil)
)

func newSessionActor(rt *Runtime, e *entry) *sessionActor {
	a := &sessionActor{rt: rt, e: e, id: e.id, log: rt.logger.With().Str("session", e.id).Logger(), instance: rt.instances.Add(1)}
	a.toolStrategy = supervisor.NewToolStrategy(supervisor.ToolOptions{Logger: a.log, OnFailure: a.onChildFailure})
	return a
}

// Receive implements actor.Actor.
func (a *sessionActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.start(ctx)
	case *actor.Restarting:
		a.abandon()
	case *actor.Stopping:
		a.abandon()
	case *actor.Stopped:
		a.e.setBusy(false)
		a.onStoppedSub()
		close(a.e.gone)
	case *idleTick:
		a.onIdleTick(m)
		return
	case *submitCmd:
		if !m.seen {
			a.handleSubmit(m)
		}
	case *cancelCmd:
		cancelled := a.turn != nil
		if cancelled {
			a.endTurn(messages.OutcomeCancelled, m.reason)
		}
		if a.cancelDetached(m.reason) {
			cancelled = true
		}
		if m.reply != nil {
			m.reply <- cancelled
		}
	case *statusCmd:
		m.reply <- a.status()
	case *switchAgentCmd:
		m.reply <- a.switchAgent(m.name)
	case *watchCmd:
		a.e.hub.watch(m.sub)
	case *modelDelta:
		if a.turn != nil && m.gen == a.e.gen {
			a.publish(messages.TextDelta{EventMeta: a.meta(), Text: m.text})
		}
	case *modelDone:
		if a.turn != nil && m.gen == a.e.gen {
			a.onModelDone(m)
		}
	case *toolDone:
		if a.turn != nil && m.gen == a.e.gen {
			a.onToolDone(m)
		}
	case *toolDeadline:
		if a.turn != nil && m.gen == a.e.gen {
			a.onToolDeadline(m.callID)
		}
	case *compactDone:
		a.onCompactDone(m)
	case *subSpawnCmd:
		a.onSubSpawn(m)
	case *subFinishCmd:
		a.onSubFinish(m)
	case *settleCmd:
		a.onSettle(m)
	case *transferCmd:
		a.onTransfer(m)
	case *approvalAskCmd:
		a.onApprovalAsk(m)
	case *approvalAnswerCmd:
		a.onApprovalAnswer(m)
	case *faultCmd:
		panic(m.err)
	}
	a.activity++
}

// HandleFailure implements actor.SupervisorStrategy for the actor's
// children (model calls and tool executors) through the tool strategy.
// A sub-agent's session actor is supervised as every session is.
func (a *sessionActor) HandleFailure(sys *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, rs *actor.RestartStatistics, reason, message any) {
	if a.isSubAgent(child) {
		a.rt.sessionStrategy.HandleFailure(sys, sup, child, rs, reason, message)
		return
	}
	a.toolStrategy.HandleFailure(sys, sup, child, rs, reason, message)
}

// start loads the session from its journal, activates it (fencing off any
// older writer), charges a sub-agent's journaled spending to its budget,
// resumes an open turn (a sub-agent activated to settle cancels it),
// settles the sub-agents of ended turns and takes the submissions that
// arrived before it.
func (a *sessionActor) start(ctx actor.Context) {
	a.actx = ctx
	st, err := a.rt.journal.Load(a.rt.ctx, a.id)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		st = &memory.State{}
	case err != nil:
		panic(fmt.Errorf("load session %s: %w", a.id, err))
	}
	activation, tail, err := a.rt.journal.Activate(a.rt.ctx, a.id, a.rt.cfg.Node)
	if err != nil {
		panic(fmt.Errorf("activate session %s: %w", a.id, err))
	}
	env := messages.Envelope{V: messages.EnvelopeVersion, Seq: tail, Type: "activated", At: a.rt.clock.Now()}
	if err := st.Apply(env, messages.Activated{Activation: activation, Node: a.rt.cfg.Node}); err != nil {
		panic(fmt.Errorf("activate session %s: %w: %w", a.id, memory.ErrConflict, err))
	}
	a.st, a.tail = st, tail
	if ag := a.subAgentFor(st.Agent); ag != nil {
		st.Agent = ag.Name
	} else if st.Agent == "" || a.rt.agents[st.Agent] == nil {
		st.Agent = a.rt.defaultAgent
	}
	a.log.Debug().Uint64("activation", activation).Uint64("tail", tail).Msg("session activated")
	a.armIdle()
	if s := a.e.sub; s != nil && s.budget != nil {
		s.budget.load(st.Usage, st.Cost, st.RoundTrips)
	}
	if st.Open != nil {
		if s := a.e.sub; s != nil && s.abort {
			a.abortOpen()
		} else {
			a.resume()
		}
	}
	a.reapOrphans()
	a.e.mu.Lock()
	pending := append([]*submitCmd(nil), a.e.pending...)
	a.e.mu.Unlock()
	for _, cmd := range pending {
		a.handleSubmit(cmd)
	}
	if a.turn == nil {
		a.e.setBusy(false)
	}
}

// idleTick is the idle timer of a session: it fires Config.IdleTimeout
// after it was armed, and carries the number of the actor instance that
// armed it and that instance's activity count of that moment.
type idleTick struct {
	instance uint64
	activity uint64
}

// armIdle arms the idle timer, when Config.IdleTimeout asks for one.
func (a *sessionActor) armIdle() {
	d := a.rt.cfg.IdleTimeout
	if d <= 0 {
		return
	}
	self, root, tick := a.actx.Self(), a.rt.system.Root, &idleTick{instance: a.instance, activity: a.activity}
	a.idleStop = a.rt.clock.AfterFunc(d, func() { root.Send(self, tick) })
}

// onIdleTick passivates the session when nothing happened since the tick
// was armed and nothing runs; otherwise it arms the timer again, so that a
// session passivates between one and two idle timeouts after its last
// message. A session that was busy when the timer fired is passivated once
// it has been idle long enough, not kept for good.
func (a *sessionActor) onIdleTick(m *idleTick) {
	if m.instance != a.instance {
		return // armed by the instance before a restart
	}
	if m.activity == a.activity && a.turn == nil && len(a.queue) == 0 && !a.compacting && len(a.e.live) == 0 && a.rt.passivate(a.e) {
		a.log.Debug().Msg("passivating idle session")
		a.actx.Poison(a.actx.Self())
		return
	}
	a.armIdle()
}

// abandon cancels the running turn's work without journaling anything:
// the actor is stopping or restarting, and the journal says where the turn
// stands.
func (a *sessionActor) abandon() {
	if a.idleStop != nil {
		a.idleStop()
		a.idleStop = nil
	}
	a.batch = nil
	a.e.clearApprovals()
	if a.turn != nil {
		a.turn.cancel()
		a.turn = nil
	}
	a.queue = nil
}

// appendEvents journals events and folds them into the state. A failure
// panics: the supervisor restarts the session, which rebuilds its state
// from the journal, or stops it for good when it was fenced. When a batch
// is open, the events join it and the batch is written at once, so the
// events are durable when appendEvents returns either way.
func (a *sessionActor) appendEvents(events ...messages.JournalEvent) {
	if a.batch != nil {
		a.stage(events...)
		a.flush()
		return
	}
	tail, err := a.rt.journal.Append(a.rt.ctx, a.id, a.st.Activation, a.tail, events...)
	if err != nil {
		panic(fmt.Errorf("journal append %s/%d: %w", a.id, a.tail+1, err))
	}
	a.fold(a.tail, events)
	a.tail = tail
}

// fold applies events, the first of which follows seq, to the state.
func (a *sessionActor) fold(seq uint64, events []messages.JournalEvent) {
	at := a.rt.clock.Now()
	for i, ev := range events {
		env := messages.Envelope{V: messages.EnvelopeVersion, Seq: seq + uint64(i) + 1, Type: ev.JournalType(), At: at}
		if err := a.st.Apply(env, ev); err != nil {
			panic(fmt.Errorf("fold %s/%d: %w", a.id, env.Seq, err))
		}
	}
}

func (a *sessionActor) publish(ev messages.Event) {
	ev = redactEvent(a.rt.redactor, ev)
	if a.batch != nil {
		a.afterJournal(func() { a.e.hub.publish(ev) })
		return
	}
	a.e.hub.publish(ev)
}

func (a *sessionActor) meta() messages.EventMeta {
	turn := a.st.Turn
	if a.turn != nil {
		turn = a.turn.index
	}
	return messages.EventMeta{Session: a.id, Turn: turn}
}

func (a *sessionActor) agent() *agent {
	if ag := a.subAgentFor(a.st.Agent); ag != nil {
		return ag
	}
	return a.rt.agents[a.st.Agent]
}

func (a *sessionActor) hook(ctx context.Context, hc *HookContext) []HookResult {
	hc.Session, hc.Agent = a.id, a.st.Agent
	if a.turn != nil {
		hc.Turn = a.turn.index
	}
	return a.rt.hooks.run(ctx, a.log, hc)
}

func (a *sessionActor) status() Status {
	s := Status{Session: a.id, Agent: a.st.Agent, NextTurn: a.st.Turn, Queued: len(a.queue),
		Usage: a.st.Usage, Cost: a.st.Cost, RoundTrips: a.st.RoundTrips, Activation: a.st.Activation, Messages: len(a.st.History)}
	if a.turn != nil {
		s.Running, s.Turn, s.TurnID = true, a.turn.index, a.turn.turnID
	}
	return s
}

// handleSubmit applies the mid-turn policy and the turn-id deduplication
// to a submission.
func (a *sessionActor) handleSubmit(cmd *submitCmd) {
	cmd.seen = true
	if idx, dup := a.st.TurnIDs[cmd.turnID]; dup {
		a.e.removePending(cmd)
		if a.turn != nil && a.turn.index == idx {
			a.e.hub.attach(cmd.sub, idx)
			return
		}
		go a.rt.replayTurn(a.id, cmd.turnID, idx, cmd.sub)
		return
	}
	if cmd.msg.Role != messages.RoleUser {
		a.e.removePending(cmd)
		cmd.sub.fail(fmt.Errorf("actors: submit: input has role %q, want %q", cmd.msg.Role, messages.RoleUser))
		return
	}
	if a.turn == nil {
		a.startTurn(cmd)
		return
	}
	switch a.rt.limits.MidTurn {
	case MidTurnReject:
		a.e.removePending(cmd)
		cmd.sub.fail(fmt.Errorf("%w: turn %d is running", ErrSessionBusy, a.turn.index))
	case MidTurnInterrupt:
		a.queue = append([]*submitCmd{cmd}, a.queue...)
		a.endTurn(messages.OutcomeCancelled, "interrupted by a new user message")
	default:
		a.queue = append(a.queue, cmd)
	}
}

// startNext starts the next queued submission, if any.
func (a *sessionActor) startNext() {
	for a.turn == nil && len(a.queue) > 0 {
		cmd := a.queue[0]
		a.queue[0] = nil // the backing array must not keep it
		a.queue = a.queue[1:]
		a.handleSubmit(cmd)
	}
	if a.turn == nil {
		a.e.setBusy(false)
	}
}

// switchAgent journals a switch of the session's agent profile.
func (a *sessionActor) switchAgent(name string) error {
	if a.rt.agents[name] == nil {
		return fmt.Errorf("%w %q", ErrUnknownAgent, name)
	}
	if a.turn != nil {
		return fmt.Errorf("%w: cannot switch agents during turn %d", ErrSessionBusy, a.turn.index)
	}
	a.applySwitch(name, "")
	return nil
}

// applySwitch journals a switch to the agent profile name, with a note for
// the new agent that gives reason when there is one.
func (a *sessionActor) applySwitch(name, reason string) {
	from := a.st.Agent
	if from == name {
		return
	}
	note := fmt.Sprintf("You are now the %q agent, taking over this conversation from the %q agent. Earlier replies followed that agent's instructions and tools; follow yours from here on.", name, from)
	if reason != "" {
		note += " Reason for the hand-off: " + reason
	}
	a.appendEvents(messages.AgentSwitched{From: from, To: name, Note: note})
	a.publish(messages.AgentChanged{EventMeta: a.meta(), From: from, To: name})
	a.log.Info().Str("from", from).Str("to", name).Msg("agent switched")
}

// onChildFailure runs (through the tool strategy) when a child panicked:
// a tool call becomes an error result, a model call fails the turn.
func (a *sessionActor) onChildFailure(child *actor.PID, reason error) {
	t := a.turn
	if t == nil {
		return
	}
	if t.modelPID != nil && t.modelPID.Equal(child) {
		a.onModelDone(&modelDone{gen: a.e.gen, err: fmt.Errorf("model call panicked: %w", reason)})
		return
	}
	for _, run := range t.running {
		if run.pid.Equal(child) {
			res := errorResult("tool %s panicked: %v", run.call.Name, panicValue(reason))
			a.expireApproval(run.call.ID, res.Content)
			a.completeTool(run, res)
			return
		}
	}
}

// panicValue returns what was passed to panic when err is a recovered
// panic, err otherwise.
func panicValue(err error) any {
	if pe, ok := errors.AsType[*supervisor.PanicError](err); ok {
		return pe.Value
	}
	return err
}
