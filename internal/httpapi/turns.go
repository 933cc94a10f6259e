package httpapi

import (
	"context"
	"errors"
	"iter"
	"mime"
	"net/http"
	"strings"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
)

// maxTurnIDLen bounds a client's turn id.
const maxTurnIDLen = 128

// TurnRequest is the body of POST /v1/sessions/{id}/turns.
type TurnRequest struct {
	// Input is the user message. Required, and not blank.
	Input string `json:"input" jsonschema:"required,pattern=\\S"`
	// TurnID is the client's id of the submission, at most 128 bytes.
	// Resubmitting an id the session has seen does not run the turn again:
	// the request follows the turn in progress, or reports how it ended.
	// Empty means a fresh id.
	TurnID string `json:"turn_id"`
}

// CancelResponse is the body of POST /v1/sessions/{id}/cancel.
type CancelResponse struct {
	// Cancelled reports whether a turn was running.
	Cancelled bool `json:"cancelled"`
}

// wantsEventStream reports whether the client asked for SSE: an Accept
// header naming text/event-stream, or ?stream=true.
func wantsEventStream(r *http.Request) bool {
	switch r.URL.Query().Get("stream") {
	case "true", "1":
		return true
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// handleTurn runs a turn: streamed as SSE, or awaited and answered with the
// actors.TurnResult. A turn that fails or is cancelled is still a 200 whose
// outcome says so; the status reflects the request, not the turn.
func (s *Server) handleTurn(w http.ResponseWriter, r *http.Request) {
	var req TurnRequest
	if err := decodeBody(r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	switch {
	case strings.TrimSpace(req.Input) == "":
		writeError(w, apiErr(http.StatusBadRequest, CodeBadRequest, `field "input" is required and must not be blank`))
		return
	case len(req.TurnID) > maxTurnIDLen:
		writeError(w, apiErr(http.StatusBadRequest, CodeBadRequest, `field "turn_id" is longer than %d bytes`, maxTurnIDLen))
		return
	}
	sess, err := s.open(r)
	if err != nil {
		writeError(w, err)
		return
	}
	end, err := s.beginTurn(sess.ID())
	if err != nil {
		writeError(w, err)
		return
	}
	defer end()
	var opts []actors.SubmitOption
	if req.TurnID != "" {
		opts = append(opts, actors.WithTurnID(req.TurnID))
	}
	input := messages.UserText(req.Input)

	if wantsEventStream(r) {
		s.serveStream(w, r, streamOptions{session: sess.ID()}, func(ctx context.Context) iter.Seq2[messages.Event, error] {
			return sess.Stream(ctx, input, opts...)
		})
		return
	}
	res, err := sess.Submit(r.Context(), input, opts...)
	if _, ok := errors.AsType[*actors.TurnError](err); ok && res != nil {
		err = nil
	}
	if err != nil {
		if r.Context().Err() != nil {
			return // the client is gone
		}
		writeError(w, runtimeError(err))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	if err := decodeBody(r, &struct{}{}, true); err != nil {
		writeError(w, err)
		return
	}
	sess, err := s.open(r)
	if err != nil {
		writeError(w, err)
		return
	}
	cancelled, err := sess.Cancel(r.Context())
	if err != nil {
		writeError(w, runtimeError(err))
		return
	}
	writeJSON(w, http.StatusOK, CancelResponse{Cancelled: cancelled})
}

// handleEvents streams every future event of the session until the client
// leaves, the session stops, or the server shuts down.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	sess, err := s.open(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.serveStream(w, r, streamOptions{session: sess.ID(), watch: true}, sess.Watch)
}
