package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrServerUnavailable is wrapped (in a *ServerError) by calls that cannot
// reach their server: it exited, its transport broke, it is reconnecting, or
// its connection gave up.
var ErrServerUnavailable = errors.New("mcp server unavailable")

// ErrClosed is wrapped by calls made after Client.Close or Conn.Close.
var ErrClosed = errors.New("mcp connection closed")

// ErrGaveUp is wrapped by the error a Conn reports when it stops
// reconnecting after ConnOptions.MaxFailures consecutive failures.
var ErrGaveUp = errors.New("gave up reconnecting")

// ServerError is a failure that concerns one MCP server. Its text names the
// server and the operation; errors.Is sees through it.
type ServerError struct {
	// Server is the server's configured name.
	Server string
	// Op is what failed: "connect", "call tool echo", "read resource ...".
	Op  string
	Err error
}

// Error implements error.
func (e *ServerError) Error() string {
	return fmt.Sprintf("mcp server %s: %s: %v", e.Server, e.Op, e.Err)
}

// Unwrap returns the underlying error.
func (e *ServerError) Unwrap() error { return e.Err }

// unavailable wraps err as a *ServerError that also matches
// ErrServerUnavailable.
func unavailable(server, op string, err error) *ServerError {
	if errors.Is(err, ErrServerUnavailable) {
		return &ServerError{Server: server, Op: op, Err: err}
	}
	return &ServerError{Server: server, Op: op, Err: fmt.Errorf("%w: %w", ErrServerUnavailable, err)}
}

// connectionErrors are the sentinels after which a session is known to be
// unusable: the SDK's own, and what a broken pipe or socket surfaces as.
var connectionErrors = []error{
	sdk.ErrConnectionClosed,
	sdk.ErrSessionMissing,
	io.EOF,
	io.ErrUnexpectedEOF,
	io.ErrClosedPipe,
	net.ErrClosed,
	syscall.EPIPE,
	syscall.ECONNRESET,
	syscall.ECONNREFUSED,
}

// IsConnectionError reports whether err means the session with the server
// is broken (as opposed to one failed request): the decision to reconnect
// is made with errors.Is against the SDK's sentinels and the I/O errors of
// a broken transport.
func IsConnectionError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, ErrServerUnavailable) {
		return true
	}
	for _, s := range connectionErrors {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
