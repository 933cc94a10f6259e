package mockllm

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/agcore/agcore/providers"
)

// apiError is the OpenAI error object.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// httpError is an error response: its status, body and Retry-After.
type httpError struct {
	status     int
	body       apiError
	retryAfter time.Duration
}

func newHTTPError(status int, typ, code, param, msg string) httpError {
	e := httpError{status: status, body: apiError{Message: msg, Type: typ}}
	if code != "" {
		e.body.Code = &code
	}
	if param != "" {
		e.body.Param = &param
	}
	return e
}

// errorFor renders err, returned by the provider, as OpenAI would: a
// *providers.Error by its kind (its Status when it has one), a context
// deadline as a 408, anything else as a 500.
func errorFor(err error) httpError {
	var pe *providers.Error
	if !errors.As(err, &pe) {
		if errors.Is(err, context.DeadlineExceeded) {
			return newHTTPError(http.StatusRequestTimeout, "timeout", "", "", err.Error())
		}
		return newHTTPError(http.StatusInternalServerError, "server_error", "", "", err.Error())
	}
	msg := pe.Message
	if msg == "" && pe.Err != nil {
		msg = pe.Err.Error()
	}
	if msg == "" {
		msg = pe.Kind.String()
	}
	if pe.Provider != "" {
		msg = pe.Provider + ": " + msg
	}
	var e httpError
	switch pe.Kind {
	case providers.KindAuthentication:
		e = newHTTPError(http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "", msg)
	case providers.KindNotFound:
		e = newHTTPError(http.StatusNotFound, "invalid_request_error", "model_not_found", "model", msg)
	case providers.KindContextLength:
		e = newHTTPError(http.StatusBadRequest, "invalid_request_error", "context_length_exceeded", "messages", msg)
	case providers.KindRateLimited:
		e = newHTTPError(http.StatusTooManyRequests, "requests", "rate_limit_exceeded", "", msg)
		e.retryAfter = pe.RetryAfter
	case providers.KindServer:
		e = newHTTPError(http.StatusInternalServerError, "server_error", "", "", msg)
	case providers.KindTimeout:
		e = newHTTPError(http.StatusRequestTimeout, "timeout", "", "", msg)
	case providers.KindBadRequest:
		e = newHTTPError(http.StatusBadRequest, "invalid_request_error", "", "", msg)
	default:
		e = newHTTPError(http.StatusInternalServerError, "server_error", "", "", msg)
	}
	if pe.Status >= 400 && pe.Status <= 599 {
		e.status = pe.Status
	}
	return e
}

// write sends e as a JSON error response. A Retry-After is sent in whole
// seconds, rounded up.
func (e httpError) write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.retryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(e.retryAfter.Seconds())), 10))
	}
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(struct {
		Error apiError `json:"error"`
	}{e.body})
}
