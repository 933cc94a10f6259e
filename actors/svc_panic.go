package actors

// This file turns a panic in a service's work (a compaction, a knowledge
// query) into an error for whoever waits for that work.

import (
	"fmt"
	"runtime/debug"

	"github.com/agcore/agcore/supervisor"
)

// servicePanic logs a panic recovered in a service's work (what, for
// session when it has one) with its stack, and returns it as an error
// (a *supervisor.PanicError) for the caller that waits for the work.
func (rt *Runtime) servicePanic(what, session string, v any) error {
	ev := rt.logger.Error().Interface("panic", v).Str("stack", string(debug.Stack()))
	if session != "" {
		ev = ev.Str("session", session)
	}
	ev.Msg(what + " panicked")
	return fmt.Errorf("%s: %w", what, supervisor.AsError(v))
}
