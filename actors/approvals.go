package actors

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

// Who decided an approval, as journaled in ApprovalGranted.By and
// ApprovalDenied.By.
const (
	// DecidedByApprover marks an answer of Config.Approver.
	DecidedByApprover = "approver"
	// DecidedByCaller marks an answer given through Runtime.Approve.
	DecidedByCaller = "caller"
	// DecidedByRuntime marks a denial the runtime made: the approval timed
	// out, or the call or its turn ended first.
	DecidedByRuntime = "runtime"
)

// PendingApproval is a tool call waiting for approval.
type PendingApproval struct {
	Session string
	Turn    int
	CallID  string
	Tool    string
	// Permission is the permission the tool needs.
	Permission toolsys.Permission
	// Arguments are the call's raw arguments (secret placeholders, never
	// secret values).
	Arguments string
	// Reason says why approval is needed.
	Reason string
	// Requested is when approval was asked; Expires is when the wait ends
	// in a denial (the approval timeout, or the call's own deadline if
	// sooner).
	Requested time.Time
	Expires   time.Time
}

// ManualApprover returns an approver that never answers by itself: every
// approval waits for Runtime.Approve (an HTTP API, a CLI prompt) until it
// times out. Use it as Config.Approver when a front end decides.
func ManualApprover() toolsys.Approver {
	return toolsys.ApproverFunc(func(ctx context.Context, _ toolsys.ApprovalRequest) (toolsys.Approval, error) {
		<-ctx.Done()
		return toolsys.Approval{}, ctx.Err()
	})
}

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

// approvalAnswerCmd decides the pending approval of callID. wait, when
// set, names the request the answer is for (an answer of Config.Approver),
// so that it cannot decide a later request of the same call.
type approvalAnswerCmd struct {
	callID string
	wait   *approvalWait
	allow  bool
	reason string
	by     string
	reply  chan error // may be nil
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
	root := c.rt.system.Root
	root.Send(c.session, &approvalAskCmd{gen: c.gen, wait: w})
	actx, cancel := context.WithCancel(ctx)
	defer cancel() // stops Config.Approver once the call has its answer
	go func() {
		ans, err := c.next.Approve(actx, req)
		if actx.Err() != nil {
			return // decided meanwhile, timed out or cancelled: the actor has seen to it
		}
		cmd := &approvalAnswerCmd{callID: req.CallID, wait: w, allow: ans.Allow, reason: ans.Reason, by: DecidedByApprover}
		if err != nil {
			cmd.allow, cmd.reason = false, "approver failed: "+err.Error()
		}
		root.Send(c.session, cmd)
	}()
	select {
	case ans := <-w.answer:
		return ans, nil
	case <-ctx.Done():
		return toolsys.Approval{}, ctx.Err()
	}
}

// approverFor returns the approver of a tool call spawned in generation
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
	if t == nil || m.gen != a.e.gen || t.running[m.wait.info.CallID] == nil {
		m.wait.answer <- toolsys.Approval{Reason: "the tool call has ended"}
		return
	}
	info := m.wait.info
	a.appendEvents(messages.ApprovalRequested{Turn: t.index, CallID: info.CallID, Tool: info.Tool, Reason: info.Reason})
	a.e.setApproval(info.CallID, m.wait)
	a.publish(messages.ApprovalPending{EventMeta: a.meta(), CallID: info.CallID, Tool: info.Tool, Reason: info.Reason})
	a.log.Info().Str("call", info.CallID).Str("tool", info.Tool).Msg("approval requested")
}

// onApprovalAnswer decides a pending approval, if it still is.
func (a *sessionActor) onApprovalAnswer(m *approvalAnswerCmd) {
	w := a.e.approval(m.callID)
	if w == nil || (m.wait != nil && m.wait != w) {
		if m.reply != nil {
			m.reply <- fmt.Errorf("%w: session %s call %s", ErrUnknownApproval, a.id, m.callID)
		}
		return
	}
	a.decide(w, m.allow, m.reason, m.by)
	if m.reply != nil {
		m.reply <- nil
	}
}

// decide journals the answer to w and hands it to the waiting call.
func (a *sessionActor) decide(w *approvalWait, allow bool, reason, by string) {
	id := w.info.CallID
	if allow {
		a.appendEvents(messages.ApprovalGranted{CallID: id, By: by})
	} else {
		reason = cmp.Or(reason, "the approver refused")
		a.appendEvents(messages.ApprovalDenied{CallID: id, By: by, Reason: reason})
	}
	a.e.setApproval(id, nil)
	w.answer <- toolsys.Approval{Allow: allow, Reason: reason}
	a.log.Info().Str("call", id).Bool("allow", allow).Str("by", by).Msg("approval decided")
}

// expireApproval denies the pending approval of callID, if any, because
// the call ended without an answer.
func (a *sessionActor) expireApproval(callID, reason string) {
	if w := a.e.approval(callID); w != nil {
		a.decide(w, false, reason, DecidedByRuntime)
	}
}

// expireApprovals denies every pending approval of the session.
func (a *sessionActor) expireApprovals(reason string) {
	for _, p := range a.e.approvals() {
		a.expireApproval(p.CallID, reason)
	}
}

// awaitedApproval reports whether the journal shows call waiting for
// approval, or refused, when it stopped: the tool never ran.
func awaitedApproval(o *memory.OpenTurn, callID string) bool {
	ap, ok := o.Approvals[callID]
	return ok && ap.Decision != memory.DecisionGranted
}

// setApproval records w as the pending approval of callID; nil forgets it.
func (e *entry) setApproval(callID string, w *approvalWait) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if w == nil {
		delete(e.waits, callID)
		return
	}
	if e.waits == nil {
		e.waits = make(map[string]*approvalWait)
	}
	e.waits[callID] = w
}

func (e *entry) approval(callID string) *approvalWait {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.waits[callID]
}

// clearApprovals forgets every pending approval without answering: the
// actor is stopping, and the waiting calls are cancelled with the turn.
func (e *entry) clearApprovals() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.waits = nil
}

// approvals returns the pending approvals, oldest first.
func (e *entry) approvals() []PendingApproval {
	e.mu.Lock()
	out := make([]PendingApproval, 0, len(e.waits))
	for _, w := range e.waits {
		out = append(out, w.info)
	}
	e.mu.Unlock()
	slices.SortFunc(out, func(x, y PendingApproval) int {
		return cmp.Or(x.Requested.Compare(y.Requested), cmp.Compare(x.CallID, y.CallID))
	})
	return out
}

// Approvals returns the tool calls of the session waiting for approval,
// oldest first. Only an active session can have any.
func (s *Session) Approvals(ctx context.Context) ([]PendingApproval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e := s.rt.live(s.id); e != nil {
		return e.approvals(), nil
	}
	return []PendingApproval{}, nil
}

// Approvals returns the tool calls of every active session waiting for
// approval, by session then age.
func (rt *Runtime) Approvals() []PendingApproval {
	rt.mu.Lock()
	entries := make([]*entry, 0, len(rt.entries))
	for _, e := range rt.entries {
		entries = append(entries, e)
	}
	rt.mu.Unlock()
	var out []PendingApproval
	for _, e := range entries {
		out = append(out, e.approvals()...)
	}
	slices.SortStableFunc(out, func(x, y PendingApproval) int { return cmp.Compare(x.Session, y.Session) })
	return out
}

// Approve answers the pending approval of tool call callID in session:
// allow runs the call, a refusal gives the model reason. The answer is
// journaled (ApprovalGranted or ApprovalDenied, By DecidedByCaller) before
// the call goes on. It fails with ErrUnknownApproval when no such approval
// is pending (unknown session or call, already answered, expired), and
// with ErrClosed after Shutdown.
func (rt *Runtime) Approve(ctx context.Context, session, callID string, allow bool, reason string) error {
	rt.mu.Lock()
	closed := rt.closed
	rt.mu.Unlock()
	if closed {
		return ErrClosed
	}
	e := rt.live(session)
	if e == nil || e.approval(callID) == nil {
		return fmt.Errorf("%w: session %s call %s", ErrUnknownApproval, session, callID)
	}
	reply := make(chan error, 1)
	rt.system.Root.Send(e.pid, &approvalAnswerCmd{callID: callID, allow: allow, reason: reason, by: DecidedByCaller, reply: reply})
	select {
	case err := <-reply:
		return err
	case <-e.gone:
		return fmt.Errorf("%w: session %s call %s: the session stopped", ErrUnknownApproval, session, callID)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// live returns the entry of session id if its actor runs, without
// activating it.
func (rt *Runtime) live(id string) *entry {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.entries[id]
}
