package plan

import "context"

// StepHook is called by the agent running a plan each time a step reaches a
// terminal status (Completed, Failed or Skipped), after the transition, on
// the goroutine that owns the plan. step is a copy of the step that
// finished. The hook may read plan but must not change it or keep it after
// returning; it should Clone the plan to keep a snapshot. ctx is the run's
// context.
type StepHook func(ctx context.Context, plan *Plan, step Step)
