package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/providers"
)

// Errors this package wraps inside a *providers.Error.
var (
	// ErrMalformedChunk marks a streamed data line that is not a valid chunk
	// (Kind other). The stream goes on: Recv may be called again.
	ErrMalformedChunk = errors.New("openai: malformed stream chunk")
	// ErrStreamCut marks a stream that stopped in the middle of a line, or
	// before both "data: [DONE]" and a finish reason (Kind timeout). It wraps
	// io.ErrUnexpectedEOF.
	ErrStreamCut = fmt.Errorf("openai: stream cut short: %w", io.ErrUnexpectedEOF)
	// ErrIdle marks a stream on which nothing arrived for Options.Timeout
	// (Kind timeout). It wraps context.DeadlineExceeded.
	ErrIdle = fmt.Errorf("openai: stream idle: %w", context.DeadlineExceeded)
)

// maxMessage caps the body text copied into an error.
const maxMessage = 512

// classify turns a failure of one call into a *providers.Error, with
// credentials masked in its message and in the message of the error it
// wraps. ctx is the
// call's context (its cause tells an idle timeout from the caller's
// cancellation); x holds the HTTP response, if one arrived.
func (a *api) classify(ctx context.Context, err error, x *exchange) error {
	if err == nil {
		return nil
	}
	if pe, ok := errors.AsType[*providers.Error](err); ok {
		return pe
	}
	pe := &providers.Error{Provider: a.name, Err: err}
	if x != nil && x.resp != nil {
		pe.Status = x.resp.StatusCode
		pe.RetryAfter = retryAfter(x.resp.Header.Get, a.now())
	}
	var (
		apiErr *oai.APIError
		reqErr *oai.RequestError
	)
	switch {
	case errors.As(err, &apiErr):
		if apiErr.HTTPStatusCode != 0 {
			pe.Status = apiErr.HTTPStatusCode
		}
		pe.Message = apiErr.Message
		pe.Kind = statusKind(pe.Status, fmt.Sprint(apiErr.Code)+" "+apiErr.Type+" "+apiErr.Message)
	case errors.As(err, &reqErr):
		if reqErr.HTTPStatusCode != 0 {
			pe.Status = reqErr.HTTPStatusCode
		}
		pe.Message = truncate(strings.TrimSpace(string(reqErr.Body)), maxMessage)
		pe.Kind = statusKind(pe.Status, pe.Message)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		cause := context.Cause(ctx)
		switch {
		case errors.Is(cause, ErrIdle) || errors.Is(cause, context.DeadlineExceeded):
			pe.Kind = providers.KindTimeout
			if !errors.Is(err, cause) {
				pe.Err = fmt.Errorf("%w: %w", cause, err)
			}
		case errors.Is(err, context.DeadlineExceeded):
			pe.Kind = providers.KindTimeout
		default:
			pe.Kind = providers.KindCanceled
		}
	case errors.Is(err, oai.ErrChatCompletionInvalidModel),
		errors.Is(err, oai.ErrContentFieldsMisused),
		errors.Is(err, oai.ErrChatCompletionStreamNotSupported):
		pe.Kind = providers.KindBadRequest
	case isNetwork(err):
		pe.Kind = providers.KindTimeout
		if msg := a.unreachable(err); msg != "" {
			pe.Kind, pe.Message = providers.KindUnavailable, msg
			// The message names the endpoint; the dial error says the
			// rest without repeating the request's URL.
			if oe, ok := errors.AsType[*net.OpError](err); ok {
				pe.Err = oe
			}
		}
	default:
		pe.Kind = providers.KindOther
	}
	// The body of an error response is the endpoint's text: it may echo
	// the key it was sent, or any credential.
	pe.Message, pe.Err = a.redactor.String(pe.Message), a.redactor.Error(pe.Err)
	return pe
}

// statusKind classifies an error response; on top of
// providers.KindForStatus it recognises the context-length wording of
// servers that send no error code (vLLM, llama.cpp), and an error event in
// the middle of a stream (no status) is a server error.
func statusKind(status int, detail string) providers.Kind {
	lower := strings.ToLower(detail)
	switch {
	case strings.Contains(lower, "maximum context length"),
		strings.Contains(lower, "context length exceeded"),
		strings.Contains(lower, "exceeds the context window"):
		return providers.KindContextLength
	}
	k := providers.KindForStatus(status, detail)
	if status == 0 && k == providers.KindOther {
		return providers.KindServer
	}
	return k
}

// unreachable describes a failure to connect to the endpoint at all, naming
// it: a refused connection, a host name that does not resolve or whose
// lookup failed, no route to the host or its network, a dial that timed
// out, or any of these on the way to the HTTP proxy. It returns "" for any
// other error, including a failure once connected.
func (a *api) unreachable(err error) string {
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "proxyconnect" {
		return "cannot connect to the HTTP proxy (see HTTPS_PROXY, HTTP_PROXY) for " + a.baseURL
	}
	if de, ok := errors.AsType[*net.DNSError](err); ok {
		if de.IsNotFound {
			return fmt.Sprintf("unknown host: %q does not resolve (endpoint %s)", de.Name, a.baseURL)
		}
		return fmt.Sprintf("DNS lookup of %q failed (endpoint %s)", de.Name, a.baseURL)
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: nothing is listening at " + a.baseURL
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to host: cannot reach " + a.baseURL
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable: cannot reach " + a.baseURL
	}
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "dial" {
		if oe.Timeout() {
			return "connect timeout: no connection to " + a.baseURL
		}
		return "cannot connect to " + a.baseURL
	}
	return ""
}

// isNetwork reports whether err is a transport failure once connected: a
// timeout, a reset or closed connection, or a body cut short.
func isNetwork(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

// retryAfter reads the wait a response asks for: OpenAI's retry-after-ms
// when present, else the standard Retry-After (seconds or an HTTP date).
func retryAfter(header func(string) string, now time.Time) time.Duration {
	if v := strings.TrimSpace(header("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	d, _ := providers.ParseRetryAfter(header("Retry-After"), now)
	return d
}

// apiError decodes the "error" member of a streamed event: an object like
// the body of an error response, or a bare string.
func apiError(raw json.RawMessage) *oai.APIError {
	var e oai.APIError
	if err := json.Unmarshal(raw, &e); err == nil {
		return &e
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return &oai.APIError{Message: s}
	}
	return &oai.APIError{Message: truncate(string(raw), maxMessage)}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
