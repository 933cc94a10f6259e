package plan

import (
	"errors"
	"fmt"
)

var (
	// ErrIllegalTransition marks a status change the state machine forbids:
	// anything backwards, anything out of a terminal status, Pending straight
	// to Completed or Failed, or a status to itself.
	ErrIllegalTransition = errors.New("illegal step transition")
	// ErrDependencyNotCompleted marks an attempt to start a step before every
	// step it depends on has completed.
	ErrDependencyNotCompleted = errors.New("dependency not completed")
	// ErrNoStep marks a step index outside the plan.
	ErrNoStep = errors.New("no such step")
	// ErrInvalidPlan matches every *PlanError with errors.Is.
	ErrInvalidPlan = errors.New("invalid plan")
)

// TransitionError reports a status change that Plan.Transition refused.
// Err is ErrIllegalTransition, or wraps ErrDependencyNotCompleted.
type TransitionError struct {
	// Step is the index of the step.
	Step int
	// From is the step's status before the attempt (it is unchanged).
	From StepStatus
	// To is the status that was refused.
	To StepStatus
	// Err says why.
	Err error
}

// Error names the step, both statuses and the reason, as in
// "plan: step 2: completed -> running: illegal step transition".
func (e *TransitionError) Error() string {
	return fmt.Sprintf("plan: step %d: %s -> %s: %v", e.Step, e.From, e.To, e.Err)
}

// Unwrap returns e.Err.
func (e *TransitionError) Unwrap() error { return e.Err }

// PlanError says what is wrong with a plan: text a parser could not accept,
// or a Plan that fails Validate. errors.Is(err, ErrInvalidPlan) holds for
// every *PlanError.
type PlanError struct {
	// Step is the index of the offending step; -1 when the problem concerns
	// the plan as a whole.
	Step int
	// Field is the JSON field at fault ("description", "depends_on", ...);
	// empty when no single field is.
	Field string
	// Problem says what is wrong, in words a model can act on.
	Problem string
	// Err is the underlying error, such as a *json.SyntaxError; often nil.
	Err error
}

// Error names the step and field at fault and the problem, as in
// "plan: step 1: depends_on: the step depends on itself".
func (e *PlanError) Error() string {
	where := "plan"
	if e.Step >= 0 {
		where = fmt.Sprintf("plan: step %d", e.Step)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", where, e.Field, e.Problem)
	}
	return where + ": " + e.Problem
}

// Unwrap returns e.Err.
func (e *PlanError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidPlan.
func (e *PlanError) Is(target error) bool { return target == ErrInvalidPlan }
