package actors

// This file holds approvals as the outside sees them: PendingApproval,
// ManualApprover, Runtime.Approvals and Runtime.Approve. The session actor
// keeps its pending approvals itself (session_approvals.go).

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

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

// Approvals returns the tool calls of every active session waiting for
// approval, by session then age.
func (rt *Runtime) Approvals() []PendingApproval {
	type asked struct {
		ref   *sessionRef
		reply chan []PendingApproval
	}
	var all []asked
	for _, ref := range rt.liveRefs() {
		reply := make(chan []PendingApproval, 1)
		if rt.postLive(ref.id, &approvalsCmd{reply: reply}) == ref {
			all = append(all, asked{ref, reply})
		}
	}
	var out []PendingApproval
	for _, a := range all {
		select {
		case ps := <-a.reply:
			out = append(out, ps...)
		case <-a.ref.done:
		}
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
	reply := make(chan error, 1)
	ref := rt.postLive(session, &approvalAnswerCmd{callID: callID, allow: allow, reason: reason, by: DecidedByCaller, reply: reply})
	if ref == nil {
		return fmt.Errorf("%w: session %s call %s", ErrUnknownApproval, session, callID)
	}
	select {
	case err := <-reply:
		return err
	case <-ref.done:
		return fmt.Errorf("%w: session %s call %s: the session stopped", ErrUnknownApproval, session, callID)
	case <-ctx.Done():
		return ctx.Err()
	}
}
