package plan

import (
	"fmt"
	"strconv"
)

// StepStatus is where a step is in its life. The zero value is Pending.
//
// A step moves one way only: Pending → Running → Completed, Failed or
// Skipped, or Pending → Skipped directly. Nothing goes back; retrying means
// building a new Plan.
type StepStatus uint8

const (
	// Pending means the step has not started.
	Pending StepStatus = iota
	// Running means the step has started and not finished.
	Running
	// Completed means the step finished and has a Result.
	Completed
	// Failed means the step ran and did not finish; Error says why.
	Failed
	// Skipped means the step will never run; Error may say why.
	Skipped
)

var statusNames = [...]string{
	Pending:   "pending",
	Running:   "running",
	Completed: "completed",
	Failed:    "failed",
	Skipped:   "skipped",
}

// String returns the status name used in JSON and summaries, or
// "StepStatus(n)" for a value outside the enumeration.
func (s StepStatus) String() string {
	if s.valid() {
		return statusNames[s]
	}
	return "StepStatus(" + strconv.Itoa(int(s)) + ")"
}

// IsTerminal reports whether s is Completed, Failed or Skipped: a step in a
// terminal status never changes again.
func (s StepStatus) IsTerminal() bool {
	return s == Completed || s == Failed || s == Skipped
}

// CanTransition reports whether a step may move from s to to.
func (s StepStatus) CanTransition(to StepStatus) bool {
	switch s {
	case Pending:
		return to == Running || to == Skipped
	case Running:
		return to.IsTerminal()
	default:
		return false
	}
}

func (s StepStatus) valid() bool { return int(s) < len(statusNames) }

// MarshalText encodes s as its name ("pending", "running", ...).
func (s StepStatus) MarshalText() ([]byte, error) {
	if !s.valid() {
		return nil, fmt.Errorf("plan: cannot encode %s", s)
	}
	return []byte(statusNames[s]), nil
}

// UnmarshalText decodes a status name written by MarshalText.
func (s *StepStatus) UnmarshalText(text []byte) error {
	for i, name := range statusNames {
		if string(text) == name {
			*s = StepStatus(i)
			return nil
		}
	}
	return fmt.Errorf("plan: unknown step status %q", text)
}
