package supervisor

import (
	"context"
	"errors"
	"fmt"
)

// Directive is what a supervisor does about a failure.
type Directive int

// The directives, from the mildest to the most severe.
const (
	// Resume records the failure where it happened and carries on: a tool
	// that failed becomes an error result and the turn continues.
	Resume Directive = iota
	// Retry tries the same operation again after a backoff: a provider that
	// is rate limited or briefly unavailable.
	Retry
	// Restart discards the actor and starts a new one, which rebuilds its
	// state from durable storage.
	Restart
	// Stop stops the actor for good. It is never restarted.
	Stop
	// Escalate hands the failure to the supervisor's own parent.
	Escalate
)

// String returns the directive's lower-case name.
func (d Directive) String() string {
	switch d {
	case Resume:
		return "resume"
	case Retry:
		return "retry"
	case Restart:
		return "restart"
	case Stop:
		return "stop"
	case Escalate:
		return "escalate"
	}
	return fmt.Sprintf("directive(%d)", int(d))
}

// Decider maps the reason of a failure to a directive. The reason is an
// error, or the value of a recovered panic (which may be anything).
// Implementations must be safe for concurrent use.
type Decider interface {
	Decide(reason any) Directive
}

// DeciderFunc adapts a function to a Decider.
type DeciderFunc func(reason any) Directive

// Decide calls f(reason).
func (f DeciderFunc) Decide(reason any) Directive { return f(reason) }

// StopError marks an error after which an actor must not be restarted. An
// actor that meets such a condition panics with (or returns) a *StopError,
// and every decider of this package answers Stop.
type StopError struct{ Err error }

// Error implements error.
func (e *StopError) Error() string { return "unrecoverable: " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *StopError) Unwrap() error { return e.Err }

// Unrecoverable wraps err in a *StopError. It returns nil for a nil err.
func Unrecoverable(err error) error {
	if err == nil {
		return nil
	}
	return &StopError{Err: err}
}

// PanicError is a recovered panic turned into an error. Value is what was
// passed to panic.
type PanicError struct{ Value any }

// Error implements error.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// AsError returns reason as an error: reason itself when it is one (a
// *PanicError stays as it is), otherwise a *PanicError holding it. It
// returns nil for a nil reason.
func AsError(reason any) error {
	switch r := reason.(type) {
	case nil:
		return nil
	case error:
		return r
	default:
		return &PanicError{Value: r}
	}
}

// isStop reports whether reason wraps a *StopError or one of the fatal
// sentinels.
func isStop(reason any, fatal []error) bool {
	err := AsError(reason)
	if err == nil {
		return false
	}
	if se := (*StopError)(nil); errors.As(err, &se) {
		return true
	}
	for _, f := range fatal {
		if errors.Is(err, f) {
			return true
		}
	}
	return false
}

// SessionDecider returns the decider of session actors: a reason that wraps
// a *StopError or one of the fatal errors (such as the journal's "fenced"
// error: another activation owns the session) stops the session; any other
// failure, a panic included, restarts it so that it rebuilds its state from
// the journal.
func SessionDecider(fatal ...error) Decider {
	fatal = append([]error(nil), fatal...)
	return DeciderFunc(func(reason any) Directive {
		if isStop(reason, fatal) {
			return Stop
		}
		return Restart
	})
}

// ToolDecider returns the decider of tool executors: every failure (an
// error, a panic, a deadline) is resumed, that is recorded as an error
// result the model reads, and the turn goes on. A tool call is never
// restarted, because it may have side effects.
func ToolDecider() Decider {
	return DeciderFunc(func(any) Directive { return Resume })
}

// RetryDecider returns a decider for calls to a remote service: a reason for
// which retryable reports true is retried; context cancellation, a
// *StopError and every other error stop the operation. A deadline is
// retried only when retryable says so: an attempt that timed out on its own
// bound (providers.IsRetryable calls that a timeout) may succeed when made
// again, while the caller, which owns the operation's context, checks that
// context before retrying. providers.IsRetryable is the usual classifier
// for model calls.
func RetryDecider(retryable func(error) bool) Decider {
	return DeciderFunc(func(reason any) Directive {
		err := AsError(reason)
		switch {
		case err == nil:
			return Resume
		case errors.Is(err, context.Canceled):
			return Stop
		case isStop(err, nil):
			return Stop
		case retryable != nil && retryable(err):
			return Retry
		}
		return Stop
	})
}

// ConnectionDecider returns the decider of connection actors (MCP servers):
// a *StopError or one of the fatal errors stops the connection; anything
// else, a closed connection included, restarts it after a backoff.
func ConnectionDecider(fatal ...error) Decider {
	fatal = append([]error(nil), fatal...)
	return DeciderFunc(func(reason any) Directive {
		if isStop(reason, fatal) {
			return Stop
		}
		return Restart
	})
}
