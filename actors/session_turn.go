package actors

// This file holds the turn, top to bottom, as the session actor runs it:
// the user message is journaled (acknowledging it), the model is asked,
// its reply journaled, the reply's tool calls run (in parallel, each
// journaled as started before it runs and as finished when it ends), the
// model is asked again with their results, and so on until the model
// stops, a limit is hit or the turn is cancelled; then the turn's end is
// journaled and the next queued submission starts. A turn that a crash
// interrupted resumes from the journal.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/telemetry"
	"github.com/agcore/agcore/toolsys"
)

// turnRun is the in-memory side of the running turn. The journal holds
// everything needed to rebuild it.
type turnRun struct {
	index  int
	turnID string
	// params override the agent's request parameters for this turn.
	params RequestParams
	// output is the structured answer the turn must end with, if any.
	output *turnOutput
	ctx    context.Context
	cancel context.CancelFunc
	span   trace.Span // the turn's span (a no-op one when not traced)

	// deltas says whether a subscriber takes the pieces of the replies
	// the turn's model calls stream; they forward none otherwise. Only
	// the actor sets it, and it goes from false to true only.
	deltas *atomic.Bool

	roundTrips int
	usage      messages.Usage
	cost       float64
	text       string
	finish     messages.FinishReason
	retried    bool // a context-length error already triggered a compaction
	// modelBusy says that a model call is in flight (Runtime.Tree).
	modelBusy bool
	// wrote says that a tool of the current round may have written to the
	// session memory (its permission is above read-only).
	wrote bool

	calls   []messages.ToolCall // the calls of the current reply, in order
	next    int                 // index of the next call to start
	done    int                 // calls with a result
	running map[string]*toolRun
	// results receives the results of the round's calls as they end (it
	// holds one per call): the session takes every result there is when
	// any call reports, so that results that end together are journaled
	// together.
	results chan *toolDone
}

// toolRun is a tool call in flight.
type toolRun struct {
	call   messages.ToolCall
	cancel context.CancelFunc // nil for a call the session carries out
	stop   func() bool        // disarms the deadline
	// arm counts the armings of the deadline; a toolDeadline of an earlier
	// one is stale.
	arm     uint64
	started time.Time
	// child is the sub-agent session a spawn_agent call runs.
	child string
	// span is the call's span, source its tool's source, for telemetry;
	// span is nil when the runtime records neither spans nor metrics.
	span     trace.Span
	source   string
	timedOut bool
}

func (a *sessionActor) newTurn(index int, turnID string) *turnRun {
	ctx, cancel := context.WithCancel(a.rt.ctx)
	t := &turnRun{index: index, turnID: turnID, ctx: ctx, cancel: cancel, deltas: new(atomic.Bool)}
	a.turn = t
	t.deltas.Store(a.wantDeltas())
	return t
}

// startTurn journals the user message (acknowledging it), then asks the
// model.
func (a *sessionActor) startTurn(cmd *submitCmd) {
	index := a.st.Turn
	um := messages.UserMessage{TurnID: cmd.turnID, Turn: index, Message: cmd.msg}
	if cmd.output != nil {
		if err := a.prepareOutput(cmd.output); err != nil {
			a.refuse(cmd, err)
			return
		}
		um.Output = &cmd.output.spec
	}
	t := a.newTurn(index, cmd.turnID)
	a.traceTurn(t, cmd.parent, trace.SpanContext{})
	um.TraceID, um.SpanID = telemetry.Ref(t.span)
	a.stage(um)
	// The submission stays pending until its message is durable: if the
	// append fails, the restarted actor takes it up again.
	a.after(func() { a.dropPending(cmd) })
	t.params, t.output = cmd.params, cmd.output
	a.staleMemory()
	a.attach(cmd.sub, index)
	a.watchTask(cmd)
	a.publish(messages.TurnStarted{EventMeta: a.meta(), TurnID: cmd.turnID, Agent: a.st.Agent})
	a.hook(t.ctx, HookContext{Event: OnTurnStart})
	a.requestModel()
}

// resume carries on the turn the journal left open: calls with a recorded
// result are not re-run, a started call without a result is re-run only
// when its tool is idempotent or read-only (otherwise the model reads that
// it was interrupted), and calls never started are run. A call whose
// approval was requested and not granted never ran: it counts as not
// started, and asks for approval again.
func (a *sessionActor) resume() {
	o := a.st.Open
	t := a.newTurn(o.Turn, o.TurnID)
	t.roundTrips, t.usage, t.cost = o.RoundTrips, o.Usage, o.Cost
	a.traceTurn(t, trace.SpanContext{}, telemetry.RefContext(o.TraceID, o.SpanID))
	out, err := resumeOutput(o.Output)
	if err != nil {
		a.failTurn(err)
		return
	}
	t.output = out
	a.log.Info().Int("turn", o.Turn).Int("pending", len(o.Pending)).Msg("resuming open turn")
	hist := a.st.History
	var last messages.Message
	if len(hist) > 0 {
		last = hist[len(hist)-1]
	}
	switch {
	case len(o.Pending) > 0:
		a.resumeTools(o)
	case last.Role == messages.RoleAssistant && len(last.ToolCalls) == 0 && t.output != nil:
		a.takeOutput(last, messages.FinishStop)
	case last.Role == messages.RoleAssistant && len(last.ToolCalls) == 0:
		t.text = last.Text()
		t.finish = messages.FinishStop
		a.endTurn(messages.OutcomeCompleted, "")
	default:
		a.requestModel()
	}
}

// resumeTools restarts the tool round of an open turn: the pending calls
// (in call order) that may run are run, the others are answered as
// interrupted.
func (a *sessionActor) resumeTools(o *memory.OpenTurn) {
	t := a.turn
	a.nextGen()
	toRun := make([]messages.ToolCall, 0, len(o.Pending))
	for _, c := range o.Pending {
		if o.WasStarted(c.ID) && !a.rt.tools.rerunnable(c.Name) && !awaitedApproval(o, c.ID) {
			a.finishTool(c, errorResult("%s: %s is not idempotent, so it was not run again after the interruption", memory.InterruptedResult, c.Name), 0)
			continue
		}
		toRun = append(toRun, c)
	}
	t.calls, t.next, t.done, t.running = toRun, 0, 0, make(map[string]*toolRun)
	t.results = make(chan *toolDone, len(toRun))
	a.startMoreTools()
	a.checkRoundDone()
}

// requestModel checks the limits and starts the model call of the next
// round trip, once what led to it is durable.
func (a *sessionActor) requestModel() {
	t := a.turn
	ag := a.agent()
	lim := ag.limits
	switch {
	case t.roundTrips >= lim.MaxRoundTrips:
		a.endTurn(messages.OutcomeLimit, fmt.Sprintf("reached the limit of %d model round trips per turn", lim.MaxRoundTrips))
		return
	case lim.MaxTokens > 0 && a.st.Usage.TotalTokens >= lim.MaxTokens:
		a.endTurn(messages.OutcomeLimit, fmt.Sprintf("the session used %d tokens of its budget of %d", a.st.Usage.TotalTokens, lim.MaxTokens))
		return
	case lim.MaxCost > 0 && a.st.Cost >= lim.MaxCost:
		a.endTurn(messages.OutcomeLimit, fmt.Sprintf("the session cost %.4f of its budget of %.4f", a.st.Cost, lim.MaxCost))
		return
	}
	prov, model, err := a.rt.resolveModel(ag)
	if err != nil {
		a.failTurn(err)
		return
	}
	if t.wrote {
		t.wrote = false
		a.staleMemory()
	}
	a.nextGen()
	msgs := a.st.Messages(memory.ViewOptions{})
	req := &messages.Request{Model: model, Messages: msgs, Tools: a.rt.tools.definitions(ag)}
	ag.Params.merge(t.params).apply(req)
	if t.output != nil {
		t.output.ask(req)
	}
	mc := &modelCall{
		rt: a.rt, gen: a.c.gen, ctx: t.ctx, provider: prov, chat: !ag.streams(a.rt.cfg.Stream), req: req, log: a.log, deltas: t.deltas,
		system: a.providerNameFor(ag),
		hc:     HookContext{Session: a.id, Turn: t.index, Agent: ag.Name},
		prompt: promptInput{session: a.id, turn: t.index, agent: ag, note: a.st.AgentNote, query: lastUserText(msgs),
			now: a.rt.clock.Now(), workspace: a.rt.workspaceRoot(), have: a.prompt, memoryEpoch: a.memoryEpoch},
	}
	a.after(func() {
		if a.turn == t && !a.stopping() {
			t.modelBusy = true
			a.startWork(mc.run)
		}
	})
}

// spawnChild spawns a child named name, or with a generated name if name is
// taken.
func (a *sessionActor) spawnChild(props *actor.Props, name string) *actor.PID {
	pid, err := a.actx.SpawnNamed(props, name)
	if err != nil {
		return a.actx.Spawn(props)
	}
	return pid
}

// onModelDone journals the reply, then runs its tool calls or ends the
// turn.
func (a *sessionActor) onModelDone(m *modelDone) {
	t := a.turn
	t.modelBusy = false
	if m.err != nil {
		if providers.KindOf(m.err) == providers.KindContextLength && !t.retried && !a.rt.cfg.Compaction.Disabled {
			t.retried = true
			a.log.Info().Err(m.err).Msg("context length exceeded: compacting, then retrying")
			a.publish(messages.ErrorEvent{EventMeta: a.meta(), Message: m.err.Error(), Kind: providers.KindContextLength.String()})
			a.requestCompaction(true, true)
			return
		}
		a.failTurn(m.err)
		return
	}
	resp := m.resp
	a.hook(t.ctx, HookContext{Event: PostRequest, Request: m.req, Response: resp})
	msg := resp.Message
	msg.Role = messages.RoleAssistant
	msg.ToolCalls = uniqueCallIDs(msg.ToolCalls, t.index, t.roundTrips)
	model := resp.Model
	if model == "" {
		model = m.req.Model
	}
	cost := a.rt.tracker.Record(model, resp.Usage)
	a.stage(messages.AssistantMessage{Turn: t.index, Message: msg, FinishReason: resp.FinishReason, Model: model, Usage: resp.Usage, Cost: cost})
	t.roundTrips++
	t.usage = t.usage.Add(resp.Usage)
	t.cost += cost
	a.publish(messages.UsageReported{EventMeta: a.meta(), Model: model, Usage: resp.Usage, Cost: cost, SessionUsage: a.st.Usage, SessionCost: a.st.Cost})
	if reason := a.chargeBudget(resp.Usage, cost, 1); reason != "" {
		a.endTurn(messages.OutcomeLimit, reason)
		return
	}
	if t.output != nil && a.takeOutput(msg, resp.FinishReason) {
		return
	}
	if resp.FinishReason == messages.FinishToolCalls && len(msg.ToolCalls) > 0 {
		a.runTools(msg.ToolCalls)
		return
	}
	t.text, t.finish = msg.Text(), resp.FinishReason
	a.endTurn(messages.OutcomeCompleted, "")
}

// failTurn reports err and ends the turn as failed.
func (a *sessionActor) failTurn(err error) {
	kind := "runtime"
	var pe *providers.Error
	if errors.As(err, &pe) {
		kind = pe.Kind.String()
	} else if be := (*blockedError)(nil); errors.As(err, &be) {
		kind = "blocked"
	}
	a.publish(messages.ErrorEvent{EventMeta: a.meta(), Message: err.Error(), Kind: kind})
	a.endTurn(messages.OutcomeFailed, err.Error())
}

// runTools starts the calls of one reply, in parallel up to the limit.
func (a *sessionActor) runTools(calls []messages.ToolCall) {
	t := a.turn
	t.calls, t.next, t.done, t.running = calls, 0, 0, make(map[string]*toolRun)
	t.results = make(chan *toolDone, len(calls))
	a.startMoreTools()
	a.checkRoundDone()
}

// startMoreTools starts waiting calls while fewer than MaxParallelTools run.
func (a *sessionActor) startMoreTools() {
	t := a.turn
	limit := a.agent().limits.MaxParallelTools
	for a.turn == t && t.next < len(t.calls) && len(t.running) < limit {
		call := t.calls[t.next]
		t.next++
		a.startTool(call)
	}
}

// checkRoundDone asks the model again once every call has its result,
// after a compaction when the round took the history past the threshold.
func (a *sessionActor) checkRoundDone() {
	t := a.turn
	if t != nil && t.calls != nil && t.done == len(t.calls) && len(t.running) == 0 {
		t.calls = nil
		if a.compactRound() {
			return
		}
		a.requestModel()
	}
}

// startTool runs the PreToolUse hooks, journals ToolCallStarted, and
// starts the call: a call of the runtime's own tools that the session
// carries out itself begins here, any other runs off the mailbox with its
// deadline once ToolCallStarted is durable.
func (a *sessionActor) startTool(call messages.ToolCall) {
	t := a.turn
	ag := a.agent()
	if !a.rt.tools.allowed(ag, call.Name) {
		res := errorResult("tool %q is not available to agent %q", call.Name, ag.Name)
		a.traceRefused(call, res, "not_allowed")
		a.finishTool(call, res, 0)
		return
	}
	var results []HookResult
	if a.rt.hooks.has(PreToolUse) {
		c := call // a hook may change the call it is shown
		results = a.hook(t.ctx, HookContext{Event: PreToolUse, Call: &c})
		call = c
	}
	if reason, ok := blocked(results, "blocked by a hook"); ok {
		res := errorResult("tool call blocked: %s", reason)
		a.traceRefused(call, res, "blocked")
		a.finishTool(call, res, 0)
		return
	}
	for _, r := range results {
		if r.Arguments != "" {
			call.Arguments = r.Arguments
		}
	}
	a.stage(messages.ToolCallStarted{Turn: t.index, CallID: call.ID, Name: call.Name, Arguments: call.Arguments})
	a.publish(messages.ToolStarted{EventMeta: a.meta(), CallID: call.ID, Name: call.Name, Arguments: call.Arguments, Source: a.rt.tools.source(call.Name)})

	if tool, ok := a.rt.tools.get(call.Name); !ok || tool.Permission() > toolsys.PermReadOnly {
		t.wrote = true
	}
	run := &toolRun{call: call, started: a.rt.clock.Now()}
	callCtx := a.traceTool(t.ctx, run)
	if st := a.rt.tools.sessionTool(call.Name); st != nil {
		if res, done := st.start(a, run); done {
			a.endToolSpan(run, res, 0)
			a.finishTool(call, res, 0)
		} else {
			t.running[call.ID] = run
		}
		return
	}
	// The call's deadline runs while the call does, not while it waits
	// for approval: the session's timer is disarmed meanwhile, and the
	// tool's context gets its deadline once the permission pipeline lets
	// the call through (toolsys.WithCallTimeout).
	timeout := ag.limits.ToolTimeout
	ctx, cancel := context.WithCancel(callCtx)
	run.cancel = cancel
	gen := a.c.gen
	ex := &toolExec{rt: a.rt, gen: gen, ctx: ctx, timeout: timeout, call: call, results: t.results, tc: &toolsys.Context{
		SessionID: a.id, Turn: t.index, Agent: ag.Name, CallID: call.ID, Workspace: a.rt.cfg.Workspace,
		Logger: narrow(a.log, "tool", call.Name, "call", call.ID), Costs: a.rt.tracker,
		Progress: a.progressHook(gen, call.ID),
	}, approver: a.approverFor(gen)}
	t.running[call.ID] = run
	a.after(func() {
		if a.turn != t || t.running[call.ID] != run || a.stopping() {
			return
		}
		run.started = a.rt.clock.Now()
		a.startWork(ex.run)
		a.armDeadline(run)
	})
}

// armDeadline (re)starts the deadline of a running call, whole.
func (a *sessionActor) armDeadline(run *toolRun) {
	a.disarmDeadline(run)
	timeout := a.agent().limits.ToolTimeout
	if timeout <= 0 {
		return
	}
	self, root, gen, id, arm := a.actx.Self(), a.rt.system.Root, a.c.gen, run.call.ID, run.arm
	run.stop = a.rt.clock.AfterFunc(timeout, func() { root.Send(self, &toolDeadline{gen: gen, callID: id, arm: arm}) })
}

// disarmDeadline stops the deadline of a call, so that a timer that has
// already fired is ignored too.
func (a *sessionActor) disarmDeadline(run *toolRun) {
	run.arm++
	if run.stop != nil {
		run.stop()
		run.stop = nil
	}
}

// onToolsDone takes every result the round's calls have delivered and
// records each: one append for results that ended together.
func (a *sessionActor) onToolsDone() {
	for t := a.turn; t != nil && a.turn == t; {
		select {
		case m := <-t.results:
			a.onToolDone(m)
			continue
		default:
		}
		return
	}
}

func (a *sessionActor) onToolDone(m *toolDone) {
	run := a.turn.running[m.callID]
	if run == nil {
		return
	}
	res := m.result
	if m.panicked != nil {
		res = errorResult("tool %s panicked: %v", run.call.Name, m.panicked)
		a.expireApproval(run.call.ID, res.Content)
	} else if m.err != nil {
		res = errorResult("tool %s failed: %v", run.call.Name, m.err)
		if run.timedOut = timedOut(m.err); run.timedOut {
			res = errorResult("tool %s timed out after %s", run.call.Name, a.agent().limits.ToolTimeout)
		}
		a.expireApproval(run.call.ID, res.Content)
	} else if w := a.approvals[run.call.ID]; w != nil {
		// The permission pipeline stopped waiting while the call went on:
		// the approval expired.
		a.expireApproval(run.call.ID, fmt.Sprintf("approval expired: no answer within %v", w.timeout))
	}
	a.completeTool(run, res)
}

func (a *sessionActor) onToolDeadline(callID string, arm uint64) {
	run := a.turn.running[callID]
	if run == nil || run.arm != arm {
		return
	}
	res := errorResult("tool %s timed out after %s", run.call.Name, a.agent().limits.ToolTimeout)
	run.timedOut = true
	a.expireApproval(callID, res.Content)
	a.completeTool(run, res)
}

// completeTool records the result of a call that ran, and starts what
// waited for it.
func (a *sessionActor) completeTool(run *toolRun, res toolsys.Result) {
	t := a.turn
	delete(t.running, run.call.ID)
	if run.cancel != nil {
		run.cancel()
	}
	if run.stop != nil {
		run.stop()
	}
	elapsed := a.rt.clock.Now().Sub(run.started)
	a.endToolSpan(run, res, elapsed)
	a.finishTool(run.call, res, elapsed)
	a.startMoreTools()
	a.checkRoundDone()
}

// finishTool runs the PostToolUse hooks, journals the result and publishes
// ToolFinished.
func (a *sessionActor) finishTool(call messages.ToolCall, res toolsys.Result, elapsed time.Duration) {
	t := a.turn
	if a.rt.hooks.has(PostToolUse) {
		c, r := call, res // a hook may change the result it is shown
		a.hook(t.ctx, HookContext{Event: PostToolUse, Call: &c, Result: &r})
		call, res = c, r
	}
	a.stage(messages.ToolResult{Turn: t.index, CallID: call.ID, Name: call.Name, Content: res.Content,
		IsError: res.IsError, Metadata: res.Metadata, Duration: elapsed})
	t.done++
	a.publish(messages.ToolFinished{EventMeta: a.meta(), CallID: call.ID, Name: call.Name, Duration: elapsed, IsError: res.IsError, Content: res.Content,
		Source: a.rt.tools.source(call.Name)})
}

// endTurn stops the turn's work (its sub-agents are told to stop and
// report), journals how the turn ended, and starts the next queued
// submission.
func (a *sessionActor) endTurn(outcome messages.TurnOutcome, reason string) {
	t := a.turn
	a.nextGen()
	t.cancel()
	for _, run := range t.running {
		if run.stop != nil {
			run.stop()
		}
		a.endToolSpan(run, errorResult("the turn ended (%s)", cmp.Or(reason, string(outcome))), a.rt.clock.Now().Sub(run.started))
		if run.child != "" {
			a.stopSub(run.child, cmp.Or(reason, string(outcome)))
		}
	}
	a.dropWaitingSpawns(t.index)
	if len(a.approvals) > 0 || len(a.elicits) > 0 {
		a.expireApprovals(fmt.Sprintf("the turn ended (%s) before an answer", cmp.Or(reason, string(outcome))))
	}
	var output json.RawMessage
	var outputFailure *messages.OutputFailure
	if t.output != nil {
		output, outputFailure = t.output.value, t.output.failure
	}
	if outcome == messages.OutcomeCancelled {
		a.stage(messages.TurnCancelled{Turn: t.index, TurnID: t.turnID, Reason: reason})
	} else {
		a.stage(messages.TurnCompleted{Turn: t.index, TurnID: t.turnID, Outcome: outcome, FinishReason: t.finish,
			Reason: reason, Usage: t.usage, Cost: t.cost, RoundTrips: t.roundTrips, Output: output, OutputFailure: outputFailure})
	}
	a.endTurnSpan(t, outcome, reason)
	if a.rt.hooks.has(OnTurnEnd) {
		a.hook(context.WithoutCancel(t.ctx), HookContext{Event: OnTurnEnd, Outcome: outcome})
	}
	ended := messages.TurnEnded{EventMeta: a.meta(), TurnID: t.turnID, Outcome: outcome, FinishReason: t.finish, Text: t.text,
		Reason: reason, Usage: t.usage, Cost: t.cost, RoundTrips: t.roundTrips, Output: output, OutputFailure: outputFailure}
	a.publish(ended)
	a.log.Debug().Int("turn", t.index).Str("outcome", string(outcome)).Int("round_trips", t.roundTrips).Msg("turn ended")
	a.turn = nil
	a.turnEnded(ended)
	a.reapOrphans()
	a.maybeCompact()
	a.startNext()
}

func errorResult(format string, args ...any) toolsys.Result {
	return toolsys.ErrorResult(format, args...)
}
