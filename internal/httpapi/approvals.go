package httpapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agcore/agcore/toolsys"
)

// Approval errors.
var (
	// ErrApprovalNotFound is returned by Approvals.Answer for a call that
	// is not waiting for approval (never asked, already answered, or
	// expired).
	ErrApprovalNotFound = errors.New("httpapi: no pending approval")
	// ErrDuplicateApproval is returned by Approvals.Approve when the same
	// session and call already wait for an answer.
	ErrDuplicateApproval = errors.New("httpapi: approval already pending")
)

// PendingApproval is a tool call waiting for a decision.
type PendingApproval struct {
	Session string `json:"session"`
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	// Permission is the permission the tool needs.
	Permission string `json:"permission"`
	// Arguments are the call's raw arguments (secret placeholders, never
	// secret values).
	Arguments string `json:"arguments,omitempty"`
	// Reason says why approval is needed.
	Reason string `json:"reason,omitempty"`
	// Requested is when the approval was asked; Expires when the request
	// times out and counts as a denial (zero when it does not).
	Requested time.Time `json:"requested"`
	Expires   time.Time `json:"expires,omitzero"`
}

// Approvals is a toolsys.Approver that parks each approval request until
// someone answers it through Answer (the HTTP API's approval endpoint) or
// the request's context ends (the permission pipeline's approval timeout,
// or the turn's cancellation). Wire it as toolsys.PermissionConfig.Approver.
//
// The zero value is ready to use. It is safe for concurrent use.
type Approvals struct {
	// Now tells the time of a request. Nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	pending map[approvalKey]*parked
	watch   map[string]map[*approvalWatch]struct{}
}

var _ toolsys.Approver = (*Approvals)(nil)

type approvalKey struct{ session, call string }

type parked struct {
	info   PendingApproval
	answer chan toolsys.Approval // buffered (1): Answer never blocks
}

// approvalWatch receives the approval requests of one session. Its
// channel is buffered; a request that does not fit is not delivered (the
// watcher can list the pending approvals instead).
type approvalWatch struct {
	ch chan PendingApproval
}

// Approve implements toolsys.Approver: it records the request as pending,
// tells the session's watchers, and waits for Answer or ctx.
func (a *Approvals) Approve(ctx context.Context, req toolsys.ApprovalRequest) (toolsys.Approval, error) {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	p := &parked{
		info: PendingApproval{
			Session: req.SessionID, CallID: req.CallID, Tool: req.Tool, Permission: req.Permission.String(),
			Arguments: string(req.Args), Reason: req.Reason, Requested: now(),
		},
		answer: make(chan toolsys.Approval, 1),
	}
	if dl, ok := ctx.Deadline(); ok {
		p.info.Expires = dl
	}
	key := approvalKey{req.SessionID, req.CallID}
	a.mu.Lock()
	if _, dup := a.pending[key]; dup {
		a.mu.Unlock()
		return toolsys.Approval{}, fmt.Errorf("%w: session %s call %s", ErrDuplicateApproval, req.SessionID, req.CallID)
	}
	if a.pending == nil {
		a.pending = make(map[approvalKey]*parked)
	}
	a.pending[key] = p
	for w := range a.watch[req.SessionID] {
		select {
		case w.ch <- p.info:
		default:
		}
	}
	a.mu.Unlock()

	select {
	case ans := <-p.answer:
		return ans, nil
	case <-ctx.Done():
		a.mu.Lock()
		if a.pending[key] == p {
			delete(a.pending, key)
		}
		a.mu.Unlock()
		// An answer that raced with the end of ctx still counts.
		select {
		case ans := <-p.answer:
			return ans, nil
		default:
		}
		return toolsys.Approval{}, ctx.Err()
	}
}

// Answer decides the pending approval of call in session. It fails with
// ErrApprovalNotFound when no such approval is pending.
func (a *Approvals) Answer(session, call string, ans toolsys.Approval) error {
	key := approvalKey{session, call}
	a.mu.Lock()
	p := a.pending[key]
	delete(a.pending, key)
	a.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%w: session %s call %s", ErrApprovalNotFound, session, call)
	}
	p.answer <- ans
	return nil
}

// Pending returns the approvals session waits for, oldest first. An empty
// session means every session's.
func (a *Approvals) Pending(session string) []PendingApproval {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pendingLocked(session)
}

func (a *Approvals) pendingLocked(session string) []PendingApproval {
	out := make([]PendingApproval, 0, len(a.pending))
	for k, p := range a.pending {
		if session == "" || k.session == session {
			out = append(out, p.info)
		}
	}
	slices.SortFunc(out, func(x, y PendingApproval) int {
		return cmp.Or(x.Requested.Compare(y.Requested), cmp.Compare(x.Session, y.Session), cmp.Compare(x.CallID, y.CallID))
	})
	return out
}

// Len returns the number of pending approvals.
func (a *Approvals) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}

// subscribe starts delivering the approval requests of session to a new
// watcher, whose channel first holds the requests already pending (as far
// as the buffer allows). stop ends the subscription.
func (a *Approvals) subscribe(session string, buffer int) (w *approvalWatch, stop func()) {
	w = &approvalWatch{ch: make(chan PendingApproval, buffer)}
	a.mu.Lock()
	if a.watch == nil {
		a.watch = make(map[string]map[*approvalWatch]struct{})
	}
	if a.watch[session] == nil {
		a.watch[session] = make(map[*approvalWatch]struct{})
	}
	a.watch[session][w] = struct{}{}
	for _, p := range a.pendingLocked(session) {
		select {
		case w.ch <- p:
		default:
		}
	}
	a.mu.Unlock()
	return w, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		delete(a.watch[session], w)
		if len(a.watch[session]) == 0 {
			delete(a.watch, session)
		}
	}
}
