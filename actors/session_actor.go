package actors

// This file holds sessionActor, the actor of one session: its state, its
// Receive, its start and stop, and the outbox that each message's handler
// stages into and that is flushed once, at the end of the message. The
// turn itself is in session_turn.go.

import (
	"context"
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// sessionCarry is what a session keeps across the restarts of its actor:
// the producer of its props hands it to every new instance. Only the actor
// touches it.
type sessionCarry struct {
	ref  *sessionRef
	spec *subSpec // set for a sub-agent session
	// disp runs the mailbox of the session's actor and the calls it
	// starts.
	disp *sessionDispatcher
	// opened is the session as Open loaded and activated it, for the
	// first actor to take instead of loading the journal (see
	// Runtime.activateLoaded); nil otherwise.
	opened *openedSession

	// subs are the subscribers of the session's events, each once: the
	// callers of a turn that resumes after a restart keep following it.
	// Most sessions have none or one, so a slice, not a map (see follow).
	subs []*subscriber
	// pending are the submissions received and not yet journaled (or
	// refused): a restarted actor takes them up again, since the message
	// that made it fail is not delivered again.
	pending []*submitCmd
	// gen numbers the work the actor starts (see commands.go), from the
	// runtime's count (Runtime.gens), so that numbers are never reused.
	// The work of this carry's actors is numbered above base; a result
	// numbered at or below it comes from an actor of the session that
	// stopped before this carry was made (a call that ignored its
	// context), and is neither counted nor taken.
	gen  uint64
	base uint64
	// received counts the commands received (see Runtime.retire).
	received uint64
	// settles are the settleCmd replies waiting for sub-agents to report.
	settles []chan Status
	// steps are the plan steps run as sub-agents, by child session id,
	// whose TaskAgent waits for their result.
	steps map[string]*planStepCmd
	// task is a sub-agent's report of its task to its parent.
	task *taskReport
	// inflight counts the model and tool calls started and not yet
	// reported, those of an instance before a restart included.
	inflight int
	// stop is the stopCmd received, if any: the session starts nothing
	// more and stops once its calls in flight have returned. It is kept
	// here, with drains, so that an instance restarted by a failure while
	// it stopped (a refused append) still stops.
	stop *stopCmd
	// drains are the drainCmd replies waiting for the running turn to end.
	drains []chan struct{}
	// restarts counts the restarts of the session's actor (Runtime.Tree).
	restarts int
}

func newCarry(rt *Runtime, ref *sessionRef, spec *subSpec) *sessionCarry {
	base := rt.gens.Load()
	return &sessionCarry{ref: ref, spec: spec, gen: base, base: base, disp: newSessionDispatcher(rt.workers)}
}

// openedSession is a session's state loaded from its journal, and the
// activation journaled after it, by Runtime.activateLoaded.
type openedSession struct {
	st               *memory.State
	activation, tail uint64
}

// maxKeptSubs is the largest array of subscribers a session keeps once
// none is left.
const maxKeptSubs = 4

// follow adds sub to the session's subscribers, unless it is one already.
func (c *sessionCarry) follow(sub *subscriber) {
	if !slices.Contains(c.subs, sub) {
		c.subs = append(c.subs, sub)
	}
}

// unfollow calls drop once for each subscriber, in order, and removes
// those for which it reports true. An array left empty is released unless
// it is small enough to keep for the next turn's subscriber.
func (c *sessionCarry) unfollow(drop func(*subscriber) bool) {
	kept := c.subs[:0]
	for _, s := range c.subs {
		if !drop(s) {
			kept = append(kept, s)
		}
	}
	clear(c.subs[len(kept):]) // the array must not keep a dropped subscriber
	c.subs = kept
	if len(c.subs) == 0 && cap(c.subs) > maxKeptSubs {
		c.subs = nil
	}
}

// sessionActor owns one session: it folds its journal into a State,
// journals every fact before acting on it, and runs turns. A model call
// and each tool call run as work the actor starts and that reports back;
// the actor's mailbox never waits on a model or a tool, and the journal
// is the only I/O it does itself. Everything about the session lives here,
// or in the carry the actor hands to its next instance.
type sessionActor struct {
	rt   *Runtime
	c    *sessionCarry
	id   string
	log  zerolog.Logger
	actx actor.Context

	st   *memory.State
	tail uint64
	// activating is set from start until the flush that ends the
	// actor's first message, which journals the activation with what
	// start staged, in one append (the journal is a
	// memory.ActivateAppender); tail already counts the activation.
	activating bool
	compacting bool
	turn       *turnRun
	queue      []*submitCmd

	// The maps are made when first written: most sessions never wait
	// for an approval, a question or a sub-agent.
	approvals map[string]*approvalWait // pending approvals by call id
	elicits   map[string]*elicitWait   // pending MCP questions by id
	live      map[string]*liveSub      // sub-agents that have not reported, by child id
	waiting   []*spawnReq              // spawns waiting for a sub-agent slot

	breaker memory.Breaker
	// prompt holds the layers of the system prompt between model calls;
	// memoryEpoch moves on when its session-memory layer may be stale.
	prompt      promptLayers
	memoryEpoch uint64

	// instance numbers this actor instance among the runtime's, and
	// activity counts the messages it handled, for the idle timer, which
	// idleStop disarms.
	instance uint64
	activity uint64
	idleStop func() bool
	// gone is set once the instance is stopping or restarting: it starts
	// nothing more.
	gone bool

	// The outbox of the message being handled: journal events staged,
	// events to publish and effects to run once the events are durable.
	staged  []messages.JournalEvent
	outbox  []messages.Event
	effects []func()
}

var _ actor.Actor = (*sessionActor)(nil)

func newSessionActor(rt *Runtime, c *sessionCarry) *sessionActor {
	return &sessionActor{rt: rt, c: c, id: c.ref.id, log: narrow(rt.logger, "session", c.ref.id),
		instance: rt.instances.Add(1)}
}

// addLive enters ls among the sub-agents that have not reported.
func (a *sessionActor) addLive(ls *liveSub) {
	if a.live == nil {
		a.live = make(map[string]*liveSub)
	}
	a.live[ls.child] = ls
}

// Receive implements actor.Actor. Each message's handler stages journal
// events, events and effects; flush writes the events in one append and
// then publishes and runs the rest, once per message.
func (a *sessionActor) Receive(ctx actor.Context) {
	msg := ctx.Message()
	if _, stopped := msg.(*actor.Stopped); a.gone && !stopped {
		return // stopping or restarting: the journal says where things stand
	}
	if _, ok := msg.(command); ok {
		a.c.received++
	}
	switch msg.(type) {
	case *idleTick, *treeCmd:
	default:
		a.activity++
	}
	switch m := msg.(type) {
	case *actor.Started:
		a.start(ctx)
	case *actor.Restarting:
		a.rt.tel.Restarted(a.rt.ctx, "session")
		a.c.restarts++
		a.abandon()
		return
	case *actor.Stopping:
		a.abandon()
		return
	case *actor.Stopped:
		a.stopped()
		return
	case *actor.Terminated:
		a.onTerminated(m)
	case *idleTick:
		a.onIdleTick(m)
	case *submitCmd:
		a.c.pending = append(a.c.pending, m)
		a.handleSubmit(m)
	case *cancelCmd:
		cancelled := a.turn != nil
		if cancelled {
			a.endTurn(messages.OutcomeCancelled, m.reason)
		}
		if a.cancelDetached(m.reason) {
			cancelled = true
		}
		if m.reply != nil {
			a.after(func() { m.reply <- cancelled })
		}
	case *statusCmd:
		m.reply <- a.status()
	case *treeCmd:
		m.reply <- a.treeNode()
	case *switchAgentCmd:
		err := a.switchAgent(m.name)
		a.after(func() { m.reply <- err })
	case *watchCmd:
		m.sub.attached = true
		a.c.follow(m.sub)
		a.noteDeltas(m.sub)
	case *approvalsCmd:
		m.reply <- a.pendingApprovals()
	case *drainCmd:
		if a.turn == nil {
			close(m.reply)
		} else {
			a.c.drains = append(a.c.drains, m.reply)
		}
	case *stopCmd:
		a.onStop(m)
	case *modelDelta:
		if a.turn != nil && m.gen == a.c.gen {
			a.publish(messages.TextDelta{EventMeta: a.meta(), Text: m.text})
		}
	case *modelDone:
		a.workDone(m.gen)
		a.keepPrompt(m.prompt)
		if a.turn != nil && m.gen == a.c.gen {
			a.onModelDone(m)
		}
	case *toolDone:
		a.workDone(m.gen)
		if a.turn != nil && m.gen == a.c.gen {
			a.onToolsDone()
		}
	case *toolProgress:
		a.onToolProgress(m)
	case *toolDeadline:
		if a.turn != nil && m.gen == a.c.gen {
			a.onToolDeadline(m.callID, m.arm)
		}
	case *compactDone:
		a.onCompactDone(m)
	case *turnFound:
		a.onTurnFound(m)
	case *subReport:
		a.onSubReport(m)
	case *settleCmd:
		a.c.settles = append(a.c.settles, m.reply)
		a.flushSettles()
	case *planStepCmd:
		a.onPlanStep(m)
	case *stepCancelCmd:
		a.onStepCancel(m)
	case *approvalAskCmd:
		a.onApprovalAsk(m)
	case *approvalAnswerCmd:
		a.onApprovalAnswer(m)
	case *approverAnswer:
		a.onApproverAnswer(m)
	case elicitMsg:
		a.onElicit(m)
	case *faultCmd:
		panic(m.err)
	}
	a.flush()
}

// narrow returns l with the string fields kv (key, value, ...), or l
// itself when it logs nothing: a logger's context is a copy of its
// parent's, made for every session and every tool call.
func narrow(l zerolog.Logger, kv ...string) zerolog.Logger {
	if l.GetLevel() == zerolog.Disabled {
		return l
	}
	c := l.With()
	for i := 0; i+1 < len(kv); i += 2 {
		c = c.Str(kv[i], kv[i+1])
	}
	return c.Logger()
}

// keepPrompt keeps the prompt layers a model call used, as far as they are
// still valid: the fixed layers for their key, the session-memory layer
// unless it may have changed since the call read it, and the knowledge of
// the turn.
func (a *sessionActor) keepPrompt(l *promptLayers) {
	if l == nil {
		return
	}
	if l.fixOK {
		a.prompt.key, a.prompt.fixed, a.prompt.fixOK = l.key, l.fixed, true
	}
	if l.memoryOK && l.memoryEpoch == a.memoryEpoch {
		a.prompt.memory, a.prompt.memoryEpoch, a.prompt.memoryOK = l.memory, l.memoryEpoch, true
	}
	if l.knowledgeOK {
		a.prompt.knowledge, a.prompt.knowledgeTurn, a.prompt.knowledgeOK = l.knowledge, l.knowledgeTurn, true
	}
}

// staleMemory makes the next model call read the session memory again: a
// turn starts, or a tool that may have written to it ran.
func (a *sessionActor) staleMemory() {
	a.memoryEpoch++
	a.prompt.memoryOK = false
}

// stage journals events as part of the message being handled. They are
// folded into the state at once, so the handlers read the state the
// journal will hold; flush writes them.
func (a *sessionActor) stage(events ...messages.JournalEvent) {
	a.fold(a.tail+uint64(len(a.staged)), events)
	a.staged = append(a.staged, events...)
}

// publish sends ev to the session's subscribers once what was staged
// before it is durable, in the order publish is called.
func (a *sessionActor) publish(ev messages.Event) {
	a.outbox = append(a.outbox, ev)
}

// after runs f once what was staged before it is durable, in the order
// after is called: starting work, answering callers.
func (a *sessionActor) after(f func()) {
	a.effects = append(a.effects, f)
}

// maxKeptStaging is the largest staging array a session keeps between
// messages.
const maxKeptStaging = 16

// flush writes the staged events in one append, then publishes the events
// and runs the effects of the message. A failed append panics: the
// supervisor restarts the session, which rebuilds its state from the
// journal (the state folded ahead of the append is thrown away with the
// actor), or stops it for good when it was fenced off.
func (a *sessionActor) flush() {
	if len(a.staged) > 0 || a.activating {
		events := a.staged
		a.staged = nil
		if a.activating {
			aa := a.rt.journal.(memory.ActivateAppender)
			activation, tail, err := aa.ActivateAppend(a.rt.ctx, a.id, a.rt.cfg.Node, a.tail-1, events...)
			if err != nil {
				panic(fmt.Errorf("activate session %s: %w", a.id, err))
			}
			a.activating, a.st.Activation, a.tail = false, activation, tail
			a.c.ref.activated.Store(true)
		} else {
			tail, err := a.rt.journal.Append(a.rt.ctx, a.id, a.st.Activation, a.tail, events...)
			if err != nil {
				panic(fmt.Errorf("journal append %s/%d: %w", a.id, a.tail+1, err))
			}
			a.tail = tail
		}
		// A journal keeps nothing of events once Append returns: their
		// backing array serves the next message's staging, unless a large
		// round left it too big to keep for an idle session.
		if cap(events) <= maxKeptStaging {
			clear(events)
			a.staged = events[:0]
		}
	}
	for i, ev := range a.outbox {
		a.deliver(ev)
		a.outbox[i] = nil
	}
	a.outbox = a.outbox[:0]
	for i := 0; i < len(a.effects); i++ {
		a.effects[i]()
		a.effects[i] = nil
	}
	a.effects = a.effects[:0]
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

// deliver masks ev and hands it to the subscribers that follow its turn
// (or every event) and want it, dropping those that have closed. An event
// nobody wants is not masked.
func (a *sessionActor) deliver(ev messages.Event) {
	turn := ev.Meta().Turn
	var masked messages.Event
	a.c.unfollow(func(s *subscriber) bool {
		if !s.all && (!s.attached || s.turn != turn) || !s.wants(ev) {
			return false
		}
		if masked == nil {
			masked = redactEvent(a.rt.redactor, ev)
		}
		return !s.deliver(masked)
	})
}

// attach makes sub follow the events of turn.
func (a *sessionActor) attach(sub *subscriber, turn int) {
	if sub == nil {
		return
	}
	sub.turn, sub.attached = turn, true
	a.c.follow(sub)
	a.noteDeltas(sub)
}

// noteDeltas makes the running turn's model calls forward the pieces of
// the reply they stream once sub, which just started following the
// session, wants them.
func (a *sessionActor) noteDeltas(sub *subscriber) {
	if a.turn != nil && sub.wantsDeltas() {
		a.turn.deltas.Store(true)
	}
}

// wantDeltas reports whether a subscriber of the running turn takes
// TextDelta events.
func (a *sessionActor) wantDeltas() bool {
	for _, s := range a.c.subs {
		if (s.all || s.attached && s.turn == a.turn.index) && s.wantsDeltas() {
			return true
		}
	}
	return false
}

// start loads the session from its journal, activates it (fencing off any
// older writer; when the journal can, the activation is journaled in one
// append with what start stages, such as the message of the submission
// that activated the session), charges a sub-agent's journaled spending to its budget,
// resumes an open turn (a sub-agent activated to settle cancels it),
// settles the sub-agents of ended turns, runs again the plan steps that a
// restart interrupted, and takes up the submissions received before.
func (a *sessionActor) start(ctx actor.Context) {
	a.actx = ctx
	var (
		st               *memory.State
		activation, tail uint64
		err              error
	)
	if o := a.c.opened; o != nil {
		// Open loaded the journal and journaled the activation.
		a.c.opened = nil // a restart loads the journal again
		st, activation, tail = o.st, o.activation, o.tail
	} else {
		if st, err = a.rt.loadState(a.rt.ctx, a.id); err != nil {
			panic(fmt.Errorf("load session %s: %w", a.id, err))
		}
		if _, ok := a.rt.journal.(memory.ActivateAppender); ok {
			// The activation is journaled by the flush that ends this
			// message, with what start stages (the first submission's
			// message, when a submission activated the session), in one
			// append after the tail loaded. Everything start sets going
			// waits for that flush, as it always waits for what it stages.
			activation, tail, a.activating = st.Activation+1, st.Seq+1, true
		} else if activation, tail, err = a.rt.journal.Activate(a.rt.ctx, a.id, a.rt.cfg.Node); err != nil {
			panic(fmt.Errorf("activate session %s: %w", a.id, err))
		}
	}
	if !a.activating {
		a.c.ref.activated.Store(true)
	}
	env := messages.Envelope{V: messages.EnvelopeVersion, Seq: tail, Type: "activated", At: a.rt.clock.Now()}
	if err := st.Apply(env, messages.Activated{Activation: activation, Node: a.rt.cfg.Node}); err != nil {
		panic(fmt.Errorf("activate session %s: %w: %w", a.id, memory.ErrConflict, err))
	}
	// A journal may build the history by appending; what a resident
	// session keeps is sized to what it holds.
	st.Trim()
	a.st, a.tail = st, tail
	if ag := a.subAgentFor(st.Agent); ag != nil {
		st.Agent = ag.Name
	} else if st.Agent == "" || a.rt.agents[st.Agent] == nil {
		st.Agent = a.rt.defaultAgent
	}
	a.log.Debug().Uint64("activation", activation).Uint64("tail", tail).Msg("session activated")
	spec := a.c.spec
	if spec != nil && spec.budget != nil {
		spec.budget.load(st.Usage, st.Cost, st.RoundTrips)
	}
	if st.Open != nil {
		if spec != nil && spec.reap {
			a.abortOpen()
		} else {
			a.resume()
		}
	}
	if a.c.stop != nil {
		// The instance before this one failed while it stopped (the
		// message that made it fail is not delivered again): stop now,
		// cancelling the turn it resumed.
		a.onStop(a.c.stop)
	}
	a.reapOrphans()
	a.rerunSteps()
	for _, cmd := range append([]*submitCmd(nil), a.c.pending...) {
		a.handleSubmit(cmd)
	}
	if spec != nil && spec.reap && a.c.task == nil {
		a.c.task = &taskReport{ready: true}
	}
	a.maybeReport()
	a.flushSettles()
	a.armIdle()
}

// abandon cancels the running turn's work without journaling anything:
// the actor is stopping or restarting, and the journal says where the turn
// stands. Its children (sub-agents included) stop with it.
func (a *sessionActor) abandon() {
	a.gone = true
	if a.idleStop != nil {
		a.idleStop()
		a.idleStop = nil
	}
	a.staged, a.outbox, a.effects = nil, nil, nil
	a.approvals = nil
	for _, ls := range a.live {
		ls.disarm()
	}
	if a.turn != nil {
		a.turn.cancel()
		a.turn = nil
	}
	a.queue = nil
}

// onStop handles a stopCmd: the running turn is cancelled (journaled),
// nothing more starts, and the actor stops, telling its callers m.err, once
// the calls in flight have returned.
func (a *sessionActor) onStop(m *stopCmd) {
	a.c.stop = m
	if a.turn != nil {
		a.endTurn(messages.OutcomeCancelled, m.cancelReason)
	}
	a.cancelDetached(m.cancelReason)
	a.maybeStop()
}

// maybeStop stops a stopping actor once no call is in flight.
func (a *sessionActor) maybeStop() {
	if a.stopping() && a.c.inflight == 0 {
		self := a.actx.Self()
		a.after(func() { a.actx.Stop(self) })
	}
}

// stopping reports whether the session was asked to stop (see onStop).
func (a *sessionActor) stopping() bool { return a.c.stop != nil }

// startWork runs fn, a model or tool call of the session, off its
// mailbox on the runtime's workers (see sessionDispatcher). fn sends what
// it has to say along the way through send, and returns its report, which
// is sent to the session when it returns.
func (a *sessionActor) startWork(fn func(send func(any)) any) {
	a.c.inflight++
	rt, self, d := a.rt, a.actx.Self(), a.c.disp
	send := func(msg any) { rt.system.Root.Send(self, msg) }
	rt.work.Add(1)
	d.start(func() step {
		defer rt.work.Done()
		report := fn(send)
		return d.report(func() { send(report) })
	})
}

// workDone counts a model or tool call numbered gen that has reported,
// unless it was started by an actor of an earlier carry.
func (a *sessionActor) workDone(gen uint64) {
	if gen <= a.c.base {
		return
	}
	a.c.inflight--
	a.maybeStop()
}

// nextGen numbers the next work of the session.
func (a *sessionActor) nextGen() {
	a.c.gen = a.rt.gens.Add(1)
}

// stopped runs once the actor has stopped for good (passivated, stopped by
// a stopCmd, by its supervisor or with its parent): everyone still waiting
// on the session learns why, and the session leaves the directory.
func (a *sessionActor) stopped() {
	ref := a.c.ref
	var err error
	if a.c.stop != nil {
		err = a.c.stop.err
	}
	if err == nil {
		err = a.rt.takeStopReason(ref)
	}
	if err == nil && a.c.spec != nil {
		err = fmt.Errorf("%w: sub-agent %s stopped", ErrSessionStopped, a.id)
	}
	failWith := err
	if failWith == nil {
		failWith = fmt.Errorf("%w: %s", ErrSessionStopped, a.id)
	}
	for _, cmd := range a.c.pending {
		if cmd.sub != nil {
			cmd.sub.fail(failWith)
		}
	}
	a.c.pending = nil
	for _, s := range a.c.subs {
		s.fail(failWith)
	}
	a.c.subs = nil
	for _, step := range a.c.steps {
		step.reply <- stepResult{err: failWith}
	}
	a.c.steps = nil
	for _, r := range a.c.settles {
		r <- a.status()
	}
	a.c.settles = nil
	for _, d := range a.c.drains {
		close(d)
	}
	a.c.drains = nil
	a.rt.forget(ref)
	ref.err = err
	close(ref.done)
}

// armIdle arms the idle timer of a top-level session, when
// Config.IdleTimeout asks for one. Sub-agents do not passivate: their
// parent stops them once they have reported.
func (a *sessionActor) armIdle() {
	d := a.rt.cfg.IdleTimeout
	if d <= 0 || a.c.spec != nil || a.gone {
		return
	}
	self, root, tick := a.actx.Self(), a.rt.system.Root, &idleTick{instance: a.instance, activity: a.activity}
	a.idleStop = a.rt.clock.AfterFunc(d, func() { root.Send(self, tick) })
}

// onIdleTick passivates the session when it handled no message since the
// tick was armed and nothing runs or waits, and when it has received every
// command posted to it; otherwise it arms the timer again, so that a
// session passivates between one and two idle timeouts after its last
// message. A session that was busy when the timer fired is passivated once
// it has been idle long enough.
func (a *sessionActor) onIdleTick(m *idleTick) {
	if m.instance != a.instance {
		return // armed by the instance before a restart
	}
	if m.activity == a.activity && a.idle() && a.rt.retire(a.c.ref, a.c.received) {
		a.log.Debug().Msg("passivating idle session")
		a.actx.Stop(a.actx.Self())
		return
	}
	a.armIdle()
}

// idle reports whether the session may passivate: no turn, queued
// submission, compaction, sub-agent or plan step, and nobody watching.
func (a *sessionActor) idle() bool {
	if a.turn != nil || len(a.queue) > 0 || len(a.c.pending) > 0 || a.compacting || len(a.live) > 0 || len(a.c.steps) > 0 {
		return false
	}
	a.c.unfollow(func(s *subscriber) bool { return !s.open() })
	for _, s := range a.c.subs {
		if s.all {
			return false
		}
	}
	return true
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

// hook runs the hooks of hc.Event with the session's id, agent and turn.
func (a *sessionActor) hook(ctx context.Context, hc HookContext) []HookResult {
	hc.Session, hc.Agent = a.id, a.st.Agent
	if a.turn != nil {
		hc.Turn = a.turn.index
	}
	return a.rt.hooks.run(ctx, a.log, hc)
}

func (a *sessionActor) status() Status {
	if a.st == nil {
		return Status{Session: a.id} // the journal could not be loaded
	}
	s := Status{Session: a.id, Agent: a.st.Agent, NextTurn: a.st.Turn, Queued: len(a.queue),
		Usage: a.st.Usage, Cost: a.st.Cost, RoundTrips: a.st.RoundTrips, Activation: a.st.Activation, Messages: len(a.st.History)}
	if a.turn != nil {
		s.Running, s.Turn, s.TurnID = true, a.turn.index, a.turn.turnID
	}
	return s
}

// dropPending forgets cmd once the session has journaled or refused it.
func (a *sessionActor) dropPending(cmd *submitCmd) {
	for i, c := range a.c.pending {
		if c == cmd {
			// Clear the vacated slot, so that the backing array does
			// not keep the submission (and its subscriber) alive.
			copy(a.c.pending[i:], a.c.pending[i+1:])
			a.c.pending[len(a.c.pending)-1] = nil
			a.c.pending = a.c.pending[:len(a.c.pending)-1]
			return
		}
	}
}

// refuse ends cmd's stream with err.
func (a *sessionActor) refuse(cmd *submitCmd, err error) {
	a.dropPending(cmd)
	if cmd.sub != nil {
		cmd.sub.fail(err)
	}
}

// handleSubmit applies the turn-id deduplication and the mid-turn policy
// to a submission.
func (a *sessionActor) handleSubmit(cmd *submitCmd) {
	if ref, dup := a.st.TurnIDs[cmd.turnID]; dup {
		idx := ref.Turn
		a.dropPending(cmd)
		if a.turn != nil && a.turn.index == idx {
			a.attach(cmd.sub, idx)
			if cmd.sub != nil {
				// The turn's message is durable: say so, as the first
				// submission was told.
				cmd.sub.deliver(messages.TurnStarted{EventMeta: messages.EventMeta{Session: a.id, Turn: idx}, TurnID: cmd.turnID, Agent: a.st.Agent})
			}
			a.watchTask(cmd)
			return
		}
		a.findTurn(cmd, idx)
		return
	}
	if cmd.msg.Role != messages.RoleUser {
		a.refuse(cmd, fmt.Errorf("actors: submit: input has role %q, want %q", cmd.msg.Role, messages.RoleUser))
		return
	}
	if a.turn == nil {
		a.startTurn(cmd)
		return
	}
	switch a.rt.limits.MidTurn {
	case MidTurnReject:
		a.refuse(cmd, fmt.Errorf("%w: turn %d is running", ErrSessionBusy, a.turn.index))
	case MidTurnInterrupt:
		a.queue = append([]*submitCmd{cmd}, a.queue...)
		a.endTurn(messages.OutcomeCancelled, "interrupted by a new user message")
	default:
		a.queue = append(a.queue, cmd)
	}
}

// startNext starts the next queued submission, if any, and answers the
// drains once no turn runs. A stopping session starts none: their callers
// learn why it stopped.
func (a *sessionActor) startNext() {
	for a.turn == nil && len(a.queue) > 0 && !a.stopping() {
		cmd := a.queue[0]
		a.queue[0] = nil // the backing array must not keep it
		a.queue = a.queue[1:]
		a.handleSubmit(cmd)
	}
	if a.turn == nil {
		for _, d := range a.c.drains {
			a.after(func() { close(d) })
		}
		a.c.drains = nil
	}
}

// turnFound carries how an ended turn ended, read from the journal for a
// resubmission of its turn id.
type turnFound struct {
	cmd   *submitCmd
	ended messages.TurnEnded
	err   error
}

// findTurn reads how turn idx ended off the actor's mailbox, for a
// resubmission of its turn id.
func (a *sessionActor) findTurn(cmd *submitCmd, idx int) {
	self, root, rt, id := a.actx.Self(), a.rt.system.Root, a.rt, a.id
	from := max(a.st.TurnIDs[cmd.turnID].Seq, 1) // 1 for a turn journaled before the index existed
	a.after(func() {
		go func() {
			ended, err := findTurnEnd(rt.ctx, rt.journal, id, cmd.turnID, idx, from)
			root.Send(self, &turnFound{cmd: cmd, ended: ended, err: err})
		}()
	})
}

// findTurnEnd reads how turn turn of session ended from its journal,
// from the entry at seq from (its UserMessage, which the state's
// TurnIDs index names) to the entry that ended it: the entries of that
// turn, however long the session.
func findTurnEnd(ctx context.Context, j memory.Journal, session, turnID string, turn int, from uint64) (messages.TurnEnded, error) {
	ended := messages.TurnEnded{EventMeta: messages.EventMeta{Session: session, Turn: turn}, TurnID: turnID}
	found := false
	for entry, err := range j.Read(ctx, session, from) {
		if err != nil {
			return ended, err
		}
		switch ev := entry.Event.(type) {
		case messages.AssistantMessage:
			if ev.Turn == turn {
				ended.Text, ended.FinishReason = ev.Message.Text(), ev.FinishReason
			}
		case messages.TurnCompleted:
			if ev.Turn == turn {
				ended.Outcome, ended.Reason, ended.Usage, ended.Cost, ended.RoundTrips = ev.Outcome, ev.Reason, ev.Usage, ev.Cost, ev.RoundTrips
				ended.FinishReason = ev.FinishReason
				ended.Output, ended.OutputFailure = ev.Output, ev.OutputFailure
				if ev.OutputFailure != nil {
					ended.Text = ev.OutputFailure.Raw
				}
				found = true
			}
		case messages.TurnCancelled:
			if ev.Turn == turn {
				ended.Outcome, ended.Reason = messages.OutcomeCancelled, ev.Reason
				found = true
			}
		}
		if found {
			break
		}
	}
	if !found {
		return ended, fmt.Errorf("%w: session %s turn %d (%s)", ErrTurnNotFound, session, turn, turnID)
	}
	return ended, nil
}

// onTurnFound answers a resubmission of an ended turn.
func (a *sessionActor) onTurnFound(m *turnFound) {
	if m.cmd.sub != nil {
		if m.err != nil {
			m.cmd.sub.fail(m.err)
		} else {
			m.cmd.sub.deliver(m.ended)
		}
	}
	if m.err == nil {
		a.taskEnded(m.cmd, m.ended)
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
	a.stage(messages.AgentSwitched{From: from, To: name, Note: note})
	a.publish(messages.AgentChanged{EventMeta: a.meta(), From: from, To: name})
	a.log.Info().Str("from", from).Str("to", name).Msg("agent switched")
}
