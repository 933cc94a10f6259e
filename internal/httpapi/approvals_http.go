package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/agcore/agcore/actors"
)

// PendingApproval is a tool call waiting for a decision.
type PendingApproval struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	// Permission is the permission the tool needs.
	Permission string `json:"permission"`
	// Arguments are the call's raw arguments (secret placeholders, never
	// secret values).
	Arguments string `json:"arguments,omitempty"`
	// Reason says why approval is needed.
	Reason string `json:"reason,omitempty"`
	// Requested is when the approval was asked.
	Requested time.Time `json:"requested"`
	// Expires is when the approval expires (permissions.approval_timeout)
	// and counts as a denial; absent when it does not.
	Expires time.Time `json:"expires,omitzero"`
}

func pendingApproval(p actors.PendingApproval) PendingApproval {
	return PendingApproval{
		Session: p.Session, Turn: p.Turn, CallID: p.CallID, Tool: p.Tool, Permission: p.Permission.String(),
		Arguments: p.Arguments, Reason: p.Reason, Requested: p.Requested, Expires: p.Expires,
	}
}

// ApprovalAnswer is the body of POST /v1/sessions/{id}/approvals/{call_id}.
type ApprovalAnswer struct {
	// Allow runs the call; false refuses it. Required.
	Allow *bool `json:"allow" jsonschema:"required"`
	// Reason is shown to the model when the call is refused.
	Reason string `json:"reason"`
}

// ApprovalList is the body of GET /v1/sessions/{id}/approvals.
type ApprovalList struct {
	Approvals []PendingApproval `json:"approvals"`
}

// ApprovalResult is the body of a successful answer.
type ApprovalResult struct {
	Session string `json:"session"`
	CallID  string `json:"call_id"`
	Allow   bool   `json:"allow"`
}

func (s *Server) handleListApprovals(w http.ResponseWriter, r *http.Request) {
	sess, err := s.open(r)
	if err != nil {
		writeError(w, err)
		return
	}
	pending, err := sess.Approvals(r.Context())
	if err != nil {
		writeError(w, runtimeError(err))
		return
	}
	out := ApprovalList{Approvals: make([]PendingApproval, len(pending))}
	for i, p := range pending {
		out.Approvals[i] = pendingApproval(p)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleAnswerApproval(w http.ResponseWriter, r *http.Request) {
	var req ApprovalAnswer
	if err := decodeBody(r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	if req.Allow == nil {
		writeError(w, apiErr(http.StatusBadRequest, CodeBadRequest, `field "allow" is required (true or false)`))
		return
	}
	id, err := sessionID(r)
	if err == nil {
		err = s.exists(r, id)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	call := r.PathValue("call_id")
	if err := s.rt.Approve(r.Context(), id, call, *req.Allow, req.Reason); err != nil {
		if errors.Is(err, actors.ErrUnknownApproval) {
			err = &Error{Status: http.StatusNotFound, Code: CodeApprovalNotFound,
				Message: "no tool call " + quote(call) + " of session " + quote(id) + " is waiting for approval", Err: err}
		}
		writeError(w, runtimeError(err))
		return
	}
	writeJSON(w, http.StatusOK, ApprovalResult{Session: id, CallID: call, Allow: *req.Allow})
}
