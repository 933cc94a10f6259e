package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Plan is a goal broken into ordered steps. Its JSON form is stable, with
// statuses as names, so a plan can be journaled and restored.
//
// A Plan is not safe for concurrent use: it belongs to one goroutine (the
// task agent running it), which makes every Transition. Hand other
// goroutines a Clone.
type Plan struct {
	// ID identifies the plan; parsers fill it in.
	ID string `json:"id"`
	// Goal is what the plan sets out to do.
	Goal string `json:"goal"`
	// Steps run in order; Steps[i].Index is i.
	Steps []Step `json:"steps"`
}

// Step is one unit of work in a Plan.
type Step struct {
	// Index is the step's 0-based position in Plan.Steps.
	Index int `json:"index"`
	// Description says what to do; it becomes the step's request.
	Description string `json:"description"`
	// Agent names the agent profile to run the step; empty means the task
	// agent's own.
	Agent string `json:"agent,omitempty"`
	// DependsOn lists indices of earlier steps that must complete before
	// this one starts.
	DependsOn []int `json:"depends_on,omitempty"`
	// Independent marks a step that may run in parallel with the adjacent
	// independent steps (see Plan.Next).
	Independent bool `json:"independent,omitempty"`
	// Status is where the step is; change it with Plan.Transition.
	Status StepStatus `json:"status"`
	// Result is the step's answer once Completed.
	Result string `json:"result,omitempty"`
	// Error says why the step Failed or was Skipped.
	Error string `json:"error,omitempty"`
	// Started is when the step began Running; zero if it never did.
	Started time.Time `json:"started,omitzero"`
	// Finished is when the step reached a terminal status; zero until then.
	Finished time.Time `json:"finished,omitzero"`
}

func (s Step) clone() Step {
	s.DependsOn = slices.Clone(s.DependsOn)
	return s
}

// Clone returns a deep copy of p that shares no memory with it.
func (p *Plan) Clone() *Plan {
	c := *p
	c.Steps = make([]Step, len(p.Steps))
	for i, s := range p.Steps {
		c.Steps[i] = s.clone()
	}
	return &c
}

// Transition moves step index to status to at time at. For Completed,
// detail is the step's Result; for Failed and Skipped it is the Error; for
// Running it is ignored. Entering Running records Started and entering a
// terminal status records Finished.
//
// It refuses, leaving the plan unchanged, any move the state machine forbids
// (a *TransitionError wrapping ErrIllegalTransition) and starting a step
// before all its dependencies have completed (a *TransitionError wrapping
// ErrDependencyNotCompleted). An index outside the plan gives ErrNoStep.
func (p *Plan) Transition(index int, to StepStatus, detail string, at time.Time) error {
	if index < 0 || index >= len(p.Steps) {
		return fmt.Errorf("plan: step %d: %w (the plan has %d steps)", index, ErrNoStep, len(p.Steps))
	}
	s := &p.Steps[index]
	if !s.Status.CanTransition(to) {
		return &TransitionError{Step: index, From: s.Status, To: to, Err: ErrIllegalTransition}
	}
	if to == Running {
		for _, d := range s.DependsOn {
			if st, ok := p.status(d); !ok || st != Completed {
				return &TransitionError{Step: index, From: s.Status, To: to,
					Err: fmt.Errorf("%w: step %d is %s", ErrDependencyNotCompleted, d, p.describeStatus(d))}
			}
		}
	}
	s.Status = to
	switch to {
	case Running:
		s.Started = at
	case Completed:
		s.Result, s.Finished = detail, at
	default: // Failed, Skipped
		s.Error, s.Finished = detail, at
	}
	return nil
}

// status returns the status of step i, or false when i is outside the plan.
func (p *Plan) status(i int) (StepStatus, bool) {
	if i < 0 || i >= len(p.Steps) {
		return 0, false
	}
	return p.Steps[i].Status, true
}

func (p *Plan) describeStatus(i int) string {
	if st, ok := p.status(i); ok {
		return st.String()
	}
	return "missing"
}

// Validate checks that p is well formed: it has steps, each step's Index is
// its position, every description is non-blank, every status is known,
// dependencies name distinct earlier steps, and no step has started while a
// dependency is incomplete. It returns a *PlanError naming the first
// problem. Parsers return only plans that validate; call it on plans decoded
// from JSON or built by hand.
func (p *Plan) Validate() error {
	if len(p.Steps) == 0 {
		return &PlanError{Step: -1, Field: "steps", Problem: "the plan has no steps"}
	}
	for i, s := range p.Steps {
		if s.Index != i {
			return &PlanError{Step: i, Field: "index", Problem: fmt.Sprintf("is %d, want its position %d", s.Index, i)}
		}
		if strings.TrimSpace(s.Description) == "" {
			return &PlanError{Step: i, Field: "description", Problem: "is missing or blank"}
		}
		if !s.Status.valid() {
			return &PlanError{Step: i, Field: "status", Problem: fmt.Sprintf("%s is not a known status", s.Status)}
		}
		if err := checkDeps(i, s.DependsOn, len(p.Steps)); err != nil {
			return err
		}
		if s.Status == Pending || s.Status == Skipped {
			continue
		}
		for _, d := range s.DependsOn {
			if p.Steps[d].Status != Completed {
				return &PlanError{Step: i, Field: "status", Problem: fmt.Sprintf("is %s while its dependency, step %d, is %s", s.Status, d, p.Steps[d].Status)}
			}
		}
	}
	return nil
}

// checkDeps checks the dependencies of step i in a plan of n steps: each
// names an existing, earlier step, at most once.
func checkDeps(i int, deps []int, n int) error {
	for k, d := range deps {
		var problem string
		switch {
		case d == i:
			problem = "the step depends on itself"
		case d < 0 || d >= n:
			problem = fmt.Sprintf("step %d does not exist (the plan has steps 0 to %d)", d, n-1)
		case d > i:
			problem = fmt.Sprintf("step %d comes later; a step may depend only on earlier steps", d)
		case slices.Contains(deps[:k], d):
			problem = fmt.Sprintf("step %d is listed twice", d)
		default:
			continue
		}
		return &PlanError{Step: i, Field: "depends_on", Problem: problem}
	}
	return nil
}
