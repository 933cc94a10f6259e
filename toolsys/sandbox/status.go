package sandbox

import (
	"errors"
	"fmt"
)

// MinABI is the lowest Landlock ABI a sandbox confines with: version 4
// (Linux 6.7) is the first that can deny TCP connections.
const MinABI = 4

// Status says whether commands run confined on this host.
type Status struct {
	// Confined is true when commands run under Landlock.
	Confined bool
	// ABI is the Landlock ABI version the rules are enforced with; 0 when
	// not confined.
	ABI int
	// Reason says why commands are not confined; empty when they are.
	Reason string
}

// String is a line for people: "confined (landlock ABI 7)" or
// "unconfined: <reason>".
func (s Status) String() string {
	if s.Confined {
		return fmt.Sprintf("confined (landlock ABI %d)", s.ABI)
	}
	return "unconfined: " + s.Reason
}

// ErrUnconfined is the condition of an *UnavailableError: the host cannot
// confine commands and the sandbox refuses to run them.
var ErrUnconfined = errors.New("sandbox: commands cannot be confined")

// UnavailableError is returned by Check and Start when commands cannot be
// confined. errors.Is(err, ErrUnconfined) holds for it.
type UnavailableError struct {
	// Reason says why commands cannot be confined.
	Reason string
}

// Error names the reason and the setting that runs commands unconfined.
func (e *UnavailableError) Error() string {
	return "commands cannot be confined on this host (" + e.Reason + "); they are refused. " +
		"To run them unconfined, set sandbox.mode to warn in the configuration (sandbox.Config.Mode = sandbox.Warn)"
}

// Is reports whether target is ErrUnconfined.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnconfined }
