package providers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Kind classifies a provider failure by what the caller can do about it.
type Kind int

// The kinds of provider failure. The zero Kind is KindOther.
const (
	// KindOther is a failure that fits no other kind, such as a reply that
	// cannot be decoded. It is not retryable.
	KindOther Kind = iota
	// KindAuthentication is a rejected credential (HTTP 401 or 403).
	KindAuthentication
	// KindNotFound is an unknown model or endpoint (HTTP 404, or a
	// model_not_found error code).
	KindNotFound
	// KindContextLength means the prompt does not fit the model's context
	// window (HTTP 400 with context_length_exceeded). Compacting the history
	// and trying again can help; retrying as is cannot.
	KindContextLength
	// KindRateLimited is HTTP 429. RetryAfter says how long the server asked
	// the client to wait, when it said.
	KindRateLimited
	// KindServer is a server-side failure (HTTP 5xx) or an error event in
	// the middle of a stream.
	KindServer
	// KindTimeout is a deadline, an idle stream, a read that timed out, a
	// connection reset once established, or a stream cut before its end.
	// Failing to connect at all is KindUnavailable.
	KindTimeout
	// KindBadRequest is any other 4xx, or a request this provider refuses to
	// send because it cannot express it.
	KindBadRequest
	// KindCanceled means the caller cancelled the context. It is not
	// retryable.
	KindCanceled
	// KindUnavailable means no connection to the endpoint could be made:
	// the connection was refused (nothing listens there), the host name
	// does not resolve or its lookup failed, there is no route to the
	// host, or connecting timed out. It is retryable, after the short
	// RetryPolicy.UnavailableDelay, so that a misconfigured endpoint fails
	// fast; the message names the endpoint.
	KindUnavailable
)

var kindNames = [...]string{
	KindOther:          "other",
	KindAuthentication: "authentication",
	KindNotFound:       "not found",
	KindContextLength:  "context length exceeded",
	KindRateLimited:    "rate limited",
	KindServer:         "server error",
	KindTimeout:        "timeout",
	KindBadRequest:     "bad request",
	KindCanceled:       "canceled",
	KindUnavailable:    "unavailable",
}

// String returns the kind's name, such as "rate limited".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Retryable reports whether a call that failed with this kind may succeed
// when repeated unchanged: rate limited, server, timeout and unavailable
// failures.
func (k Kind) Retryable() bool {
	switch k {
	case KindRateLimited, KindServer, KindTimeout, KindUnavailable:
		return true
	}
	return false
}

// Error is a classified provider failure. Use errors.As to read it:
//
//	var pe *providers.Error
//	if errors.As(err, &pe) && pe.Kind == providers.KindContextLength { ... }
type Error struct {
	// Kind classifies the failure.
	Kind Kind
	// Status is the HTTP status code, or 0 when no response was received.
	Status int
	// RetryAfter is the wait the server asked for (the Retry-After header),
	// or 0 when it asked for none.
	RetryAfter time.Duration
	// Provider names the provider that failed, such as "openai".
	Provider string
	// Message is the provider's own description of the failure, if any.
	Message string
	// Err is the underlying error, if any.
	Err error
}

// Error implements error. It reads like
// "openai: rate limited (status 429, retry after 2s): slow down".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		b.WriteString(e.Provider)
		b.WriteString(": ")
	}
	b.WriteString(e.Kind.String())
	switch {
	case e.Status != 0 && e.RetryAfter > 0:
		fmt.Fprintf(&b, " (status %d, retry after %s)", e.Status, e.RetryAfter)
	case e.Status != 0:
		fmt.Fprintf(&b, " (status %d)", e.Status)
	case e.RetryAfter > 0:
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil && e.Err.Error() != e.Message {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the failed call may succeed when repeated.
func (e *Error) Retryable() bool { return e.Kind.Retryable() }

// KindOf classifies err: the Kind of the first *Error in its chain;
// KindCanceled for context.Canceled and KindTimeout for
// context.DeadlineExceeded when there is none; KindOther otherwise,
// including for nil.
func KindOf(err error) Kind {
	if pe, ok := errors.AsType[*Error](err); ok {
		return pe.Kind
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, context.Canceled):
		return KindCanceled
	}
	return KindOther
}

// IsRetryable reports whether err is a provider failure worth retrying
// (see Kind.Retryable). It is false for nil.
func IsRetryable(err error) bool {
	return err != nil && KindOf(err).Retryable()
}

// RetryAfterOf returns the wait the server asked for in the first *Error of
// err's chain, or 0.
func RetryAfterOf(err error) time.Duration {
	if pe, ok := errors.AsType[*Error](err); ok {
		return pe.RetryAfter
	}
	return 0
}

// KindForStatus classifies an HTTP error response by its status code and
// its error detail (the error code, type or message text the body carried):
// 401 and 403 are authentication, 404 or a model_not_found code is not
// found, a context_length_exceeded code is context length, 408 is a
// timeout, 429 is rate limited, 5xx is a server error, any other 4xx is a
// bad request, and anything else is other.
func KindForStatus(status int, detail string) Kind {
	switch {
	case strings.Contains(detail, "context_length_exceeded"):
		return KindContextLength
	case strings.Contains(detail, "model_not_found"):
		return KindNotFound
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return KindAuthentication
	case status == http.StatusNotFound:
		return KindNotFound
	case status == http.StatusRequestTimeout:
		return KindTimeout
	case status == http.StatusTooManyRequests:
		return KindRateLimited
	case status >= 500 && status <= 599:
		return KindServer
	case status >= 400 && status <= 499:
		return KindBadRequest
	}
	return KindOther
}

// ParseRetryAfter reads a Retry-After header value: a number of seconds
// ("120", fractions accepted) or an HTTP date, which is measured from now
// (a date in the past gives 0). It reports false for an empty or malformed
// value.
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(value, 64); err == nil {
		if secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return 0, false
		}
		if secs >= float64(math.MaxInt64/int64(time.Second)) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}
