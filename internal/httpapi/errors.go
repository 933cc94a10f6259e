package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// The error codes of the API. Every error response has the body
// {"error": {"code": <code>, "message": <text>}}.
const (
	CodeBadRequest       = "bad_request"
	CodeInvalidJSON      = "invalid_json"
	CodeUnknownField     = "unknown_field"
	CodeBodyTooLarge     = "body_too_large"
	CodeUnsupportedMedia = "unsupported_media_type"
	CodeUnauthorized     = "unauthorized"
	CodeNotFound         = "not_found"
	CodeSessionNotFound  = "session_not_found"
	CodeApprovalNotFound = "approval_not_found"
	CodeTurnNotFound     = "turn_not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeSessionExists    = "session_exists"
	CodeSessionBusy      = "session_busy"
	CodeSessionStopped   = "session_stopped"
	CodeSlowSubscriber   = "slow_subscriber"
	CodeShuttingDown     = "shutting_down"
	CodeInternal         = "internal"
	// CodeOriginNotAllowed is a 403: the request came from a web page whose
	// origin is not allowed (Config.CORSOrigins).
	CodeOriginNotAllowed = "origin_not_allowed"
	// CodeHostNotAllowed is a 421: the Host header does not name the
	// server (Config.AllowedHosts).
	CodeHostNotAllowed = "host_not_allowed"
	// CodeRequestTimeout is a 408: the request body did not arrive within
	// Config.BodyTimeout.
	CodeRequestTimeout = "request_timeout"
	// CodeScheduleNotFound is a 404: the schedule does not exist.
	CodeScheduleNotFound = "schedule_not_found"
	// CodeScheduleExists is a 409: a schedule with this id exists.
	CodeScheduleExists = "schedule_exists"
	// CodeElicitationNotFound is a 404: no MCP server's question of that
	// id is pending.
	CodeElicitationNotFound = "elicitation_not_found"
)

// ErrInvalidConfig marks a Config that New refuses; the error's text names
// the field and the problem.
var ErrInvalidConfig = errors.New("httpapi: invalid config")

// Error is an API error: the HTTP status, a stable machine-readable code
// and a message for people. Handlers return it; it is written as the
// response body.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// Err is the cause, if any; it is logged, never sent.
	Err error `json:"-"`
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("httpapi: %d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error *Error `json:"error"`
}

func apiErr(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// writeJSON writes v with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"encoding the response failed"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeError writes err as an error response. An error that is not an
// *Error is an internal error whose text is not disclosed.
func writeError(w http.ResponseWriter, err error) {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		e = &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error", Err: err}
	}
	writeJSON(w, e.Status, ErrorBody{Error: e})
}
