package scripted

import (
	"errors"
	"net/http"

	"github.com/agcore/agcore/providers"
)

// ErrNoMatch is wrapped by the error a provider returns when no rule
// answers a request. That error is a *providers.Error of kind
// providers.KindBadRequest, so that it is never retried.
var ErrNoMatch = errors.New("no rule matches")

// ErrClosed is returned by Recv on a closed stream.
var ErrClosed = errors.New("scripted: stream closed")

func (k FailureKind) valid() bool {
	switch k {
	case FailRateLimit, FailServer, FailTimeout, FailContextLength, FailAuth, FailNotFound, FailBadRequest:
		return true
	}
	return false
}

// providerKind returns the providers.Kind of k, the HTTP status a server
// would answer with (0 when no response would arrive), and the standard
// message.
func (k FailureKind) providerKind() (providers.Kind, int, string) {
	switch k {
	case FailRateLimit:
		return providers.KindRateLimited, http.StatusTooManyRequests, "rate limit reached, try again later"
	case FailServer:
		return providers.KindServer, http.StatusInternalServerError, "the server had an error while processing the request"
	case FailTimeout:
		return providers.KindTimeout, 0, "the request timed out"
	case FailContextLength:
		return providers.KindContextLength, http.StatusBadRequest, "the messages exceed the model's maximum context length"
	case FailAuth:
		return providers.KindAuthentication, http.StatusUnauthorized, "invalid API key"
	case FailNotFound:
		return providers.KindNotFound, http.StatusNotFound, "the model does not exist"
	default:
		return providers.KindBadRequest, http.StatusBadRequest, "the request is invalid"
	}
}

// Err returns the error f injects: a *providers.Error with the kind, status
// and Retry-After of f, and "scripted" as its provider.
func (f Failure) Err() error {
	kind, status, msg := f.Kind.providerKind()
	if f.Message != "" {
		msg = f.Message
	}
	return &providers.Error{Kind: kind, Status: status, RetryAfter: f.RetryAfter, Provider: Name, Message: msg}
}
