package httpapi

import (
	"context"
	"encoding/json"
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
	// Output, when set, makes the turn end with a JSON object matching a
	// schema: the result's output holds it, checked.
	Output *TurnOutput `json:"output"`
}

// TurnOutput asks a turn to end with a structured answer.
type TurnOutput struct {
	// Schema is the JSON Schema the answer must match; its root is an
	// object schema. Required.
	Schema json.RawMessage `json:"schema" jsonschema:"required"`
	// Name names the schema to the model provider. Empty means "output".
	Name string `json:"name"`
	// Mode is how the answer is asked of the model: json_schema
	// (response_format) or answer_tool (a tool the model ends its turn
	// with). Empty means the server's setting for the agent's model.
	Mode messages.OutputMode `json:"mode"`
	// Retries is how many times an answer that does not match is sent
	// back to the model with the problem before the turn fails, from 0 to
	// 5. Omitted means 1.
	Retries *int `json:"retries" jsonschema:"minimum=0,maximum=5"`
}

// maxOutputRetries bounds TurnOutput.Retries.
const maxOutputRetries = 5

// UnmarshalJSON decodes o as request bodies are: unknown fields are
// refused, naming the known ones.
func (o *TurnOutput) UnmarshalJSON(data []byte) error {
	type plain TurnOutput
	return decodeJSON(data, (*plain)(o))
}

// options returns the submission options that ask for o.
func (o *TurnOutput) options() ([]actors.SubmitOption, error) {
	switch {
	case len(o.Schema) == 0 || string(o.Schema) == "null":
		return nil, apiErr(http.StatusBadRequest, CodeBadRequest, `field "output.schema" is required`)
	case o.Retries != nil && (*o.Retries < 0 || *o.Retries > maxOutputRetries):
		return nil, apiErr(http.StatusBadRequest, CodeBadRequest, `field "output.retries" must be between 0 and %d, got %d`, maxOutputRetries, *o.Retries)
	}
	opts := []actors.SubmitOption{actors.WithOutputSchema(o.Name, o.Schema)}
	if o.Mode != "" {
		opts = append(opts, actors.WithOutputMode(o.Mode))
	}
	if o.Retries != nil {
		opts = append(opts, actors.WithOutputRetries(*o.Retries))
	}
	return opts, nil
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
	if req.Output != nil {
		out, err := req.Output.options()
		if err != nil {
			writeError(w, err)
			return
		}
		opts = append(opts, out...)
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
