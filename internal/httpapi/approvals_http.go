package httpapi

import (
	"errors"
	"net/http"

	"github.com/agcore/agcore/toolsys"
)

// ApprovalAnswer is the body of POST /v1/sessions/{id}/approvals/{call_id}.
type ApprovalAnswer struct {
	// Allow runs the call; false refuses it. Required.
	Allow *bool `json:"allow"`
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
	id, err := sessionID(r)
	if err == nil {
		err = s.exists(r, id)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ApprovalList{Approvals: s.approvals.Pending(id)})
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
	if err := s.approvals.Answer(id, call, toolsys.Approval{Allow: *req.Allow, Reason: req.Reason}); err != nil {
		if errors.Is(err, ErrApprovalNotFound) {
			err = &Error{Status: http.StatusNotFound, Code: CodeApprovalNotFound,
				Message: "no tool call " + quote(call) + " of session " + quote(id) + " is waiting for approval", Err: err}
		}
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ApprovalResult{Session: id, CallID: call, Allow: *req.Allow})
}
