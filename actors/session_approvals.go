package actors

// This file holds approvals inside the session actor: the approver the
// runtime puts in front of Config.Approver for each tool call
// (callApprover, which runs in the call's executor), and the actor's side,
// which journals each request and its answer.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// approvalWait is an approval the session actor has journaled as requested
// and not yet decided. The actor is its only writer.
type approvalWait struct {
	info    PendingApproval
	timeout time.Duration
	answer  chan toolsys.Approval // buffered (1): written once, by the actor
}

// approvalAskCmd says that a tool call of the running turn needs approval.
type approvalAskCmd struct {
	gen  uint64
	wait *approvalWait
}

// approvalAnswerCmd decides the pending approval of callID: an answer of
// Runtime.Approve. approverAnswer is Config.Approver's.
type approvalAnswerCmd struct {
	callID string
	allow  bool
	reason string
	by     string
	reply  chan error
}

// approverAnswer is Config.Approver's answer to the request wait, which it
// cannot decide once a later request of the same call replaced it.
type approverAnswer struct {
	wait   *approvalWait
	allow  bool
	reason string
}

// callApprover is the approver the runtime puts in front of Config.Approver
// for one tool call (through toolsys.WithApprover). It runs in the call's
// executor, never in the session's mailbox: the session actor journals the
// request and publishes ApprovalPending, Config.Approver and Runtime.Approve
// race to answer through the actor, which journals the first answer, and
// the call waits for it.
type callApprover struct {
	rt      *Runtime
	session *actor.PID
	gen     uint64
	turn    int
	next    toolsys.Approver
}

// Approve implements toolsys.Approver.
func (c *callApprover) Approve(ctx context.Context, req toolsys.ApprovalRequest) (toolsys.Approval, error) {
	now := c.rt.clock.Now()
	w := &approvalWait{
		info: PendingApproval{
			Session: req.SessionID, Turn: c.turn, CallID: req.CallID, Tool: req.Tool, Permission: req.Permission,
			Arguments: string(req.Args), Reason: req.Reason, Requested: now,
		},
		timeout: req.Timeout,
		answer:  make(chan toolsys.Approval, 1),
	}
	if req.Timeout > 0 {
		w.info.Expires = now.Add(req.Timeout)
	}
	if dl, ok := ctx.Deadline(); ok && (w.info.Expires.IsZero() || dl.Before(w.info.Expires)) {
		w.info.Expires = dl
	}
	_, span := c.rt.tel.StartApproval(ctx, req.Tool, req.CallID)
	root := c.rt.system.Root
	root.Send(c.session, &approvalAskCmd{gen: c.gen, wait: w})
	// Stops Config.Approver once the call has its answer. When ctx ended
	// first, its cause goes to Config.Approver's context too: Go closes
	// ctx's Done before it cancels ctx's children, so this cancel can come
	// first, and a plain one would hide the cause (an approval timeout,
	// which a prompt tells apart from a cancelled call).
	actx, cancel := context.WithCancelCause(ctx)
	defer func() { cancel(context.Cause(ctx)) }()
	go func() {
		ans, err := c.next.Approve(actx, req)
		if actx.Err() != nil {
			return // decided meanwhile, timed out or cancelled: the actor has seen to it
		}
		m := &approverAnswer{wait: w, allow: ans.Allow, reason: ans.Reason}
		if err != nil {
			m.allow, m.reason = false, "approver failed: "+err.Error()
		}
		root.Send(c.session, m)
	}()
	select {
	case ans := <-w.answer:
		c.rt.tel.EndApproval(ctx, span, ans.Allow, "", nil)
		return ans, nil
	case <-ctx.Done():
		c.rt.tel.EndApproval(ctx, span, false, "", ctx.Err())
		return toolsys.Approval{}, ctx.Err()
	}
}

// approverFor returns the approver of a tool call started in generation
// gen, or nil when Config.Approver is nil (the tools' own permission
// pipeline then decides alone).
func (a *sessionActor) approverFor(gen uint64) toolsys.Approver {
	if a.rt.cfg.Approver == nil {
		return nil
	}
	return &callApprover{rt: a.rt, session: a.actx.Self(), gen: gen, turn: a.turn.index, next: a.rt.cfg.Approver}
}

// onApprovalAsk journals ApprovalRequested and publishes ApprovalPending
// for a call of the current tool round; a request from work that has ended
// is refused.
func (a *sessionActor) onApprovalAsk(m *approvalAskCmd) {
	t := a.turn
	if t == nil || m.gen != a.c.gen || t.running[m.wait.info.CallID] == nil {
		m.wait.answer <- toolsys.Approval{Reason: "the tool call has ended"}
		return
	}
	info := m.wait.info
	a.stage(messages.ApprovalRequested{Turn: t.index, CallID: info.CallID, Tool: info.Tool, Reason: info.Reason})
	if a.approvals == nil {
		a.approvals = make(map[string]*approvalWait)
	}
	a.approvals[info.CallID] = m.wait
	// The call's deadline does not run while it waits: it is armed again,
	// whole, once the call is approved.
	a.disarmDeadline(t.running[info.CallID])
	a.publish(messages.ApprovalPending{EventMeta: a.meta(), CallID: info.CallID, Tool: info.Tool, Reason: info.Reason})
	a.log.Info().Str("call", info.CallID).Str("tool", info.Tool).Msg("approval requested")
}

// onApprovalAnswer decides a pending approval for Runtime.Approve, if it
// still is pending.
func (a *sessionActor) onApprovalAnswer(m *approvalAnswerCmd) {
	w := a.approvals[m.callID]
	if w == nil {
		m.reply <- fmt.Errorf("%w: session %s call %s", ErrUnknownApproval, a.id, m.callID)
		return
	}
	a.decide(w, m.allow, m.reason, m.by)
	a.after(func() { m.reply <- nil })
}

// onApproverAnswer decides a pending approval for Config.Approver, if the
// request it answers still is pending.
func (a *sessionActor) onApproverAnswer(m *approverAnswer) {
	if w := a.approvals[m.wait.info.CallID]; w == m.wait {
		a.decide(w, m.allow, m.reason, DecidedByApprover)
	}
}

// decide journals the answer to w and, once it is durable, hands it to
// the waiting call.
func (a *sessionActor) decide(w *approvalWait, allow bool, reason, by string) {
	id := w.info.CallID
	if allow {
		a.stage(messages.ApprovalGranted{CallID: id, By: by})
	} else {
		reason = cmp.Or(reason, "the approver refused")
		a.stage(messages.ApprovalDenied{CallID: id, By: by, Reason: reason})
	}
	delete(a.approvals, id)
	if run := a.turnCall(id); run != nil && allow {
		run.started = a.rt.clock.Now()
		a.armDeadline(run)
	}
	ans := toolsys.Approval{Allow: allow, Reason: reason}
	a.after(func() { w.answer <- ans })
	a.log.Info().Str("call", id).Bool("allow", allow).Str("by", by).Msg("approval decided")
}

// turnCall returns the running call callID of the running turn, or nil.
func (a *sessionActor) turnCall(callID string) *toolRun {
	if a.turn == nil {
		return nil
	}
	return a.turn.running[callID]
}

// expireApproval denies the pending approval of callID, if any, because
// the call ended without an answer.
func (a *sessionActor) expireApproval(callID, reason string) {
	if w := a.approvals[callID]; w != nil {
		a.decide(w, false, reason, DecidedByRuntime)
	}
}

// expireApprovals denies every pending approval of the session, and
// cancels its pending MCP questions.
func (a *sessionActor) expireApprovals(reason string) {
	for _, p := range a.pendingApprovals() {
		a.expireApproval(p.CallID, reason)
	}
	a.cancelElicitations(reason)
}

// pendingApprovals returns the pending approvals, oldest first.
func (a *sessionActor) pendingApprovals() []PendingApproval {
	out := make([]PendingApproval, 0, len(a.approvals))
	for _, w := range a.approvals {
		out = append(out, w.info)
	}
	slices.SortFunc(out, func(x, y PendingApproval) int {
		return cmp.Or(x.Requested.Compare(y.Requested), cmp.Compare(x.CallID, y.CallID))
	})
	return out
}

// awaitedApproval reports whether the journal shows call waiting for
// approval, or refused, when it stopped: the tool never ran.
func awaitedApproval(o *memory.OpenTurn, callID string) bool {
	ap, ok := o.Approvals[callID]
	return ok && ap.Decision != memory.DecisionGranted
}
