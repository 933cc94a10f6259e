// Package plan holds task plans: a goal broken into ordered steps that a
// task agent runs one after another, or in parallel where the plan allows,
// and the parser that reads a plan from what a model wrote.
//
//	p, err := plan.JSONParser{}.Parse(modelText)
//	if err != nil {
//		return err // a *PlanError: show it to the model and ask again
//	}
//	for !p.Done() {
//		for _, s := range p.Blocked() {
//			_ = p.Transition(s.Index, plan.Skipped, "a dependency did not complete", now())
//		}
//		for _, s := range p.Next() {
//			_ = p.Transition(s.Index, plan.Running, "", now())
//			answer, err := run(ctx, s)
//			if err != nil {
//				_ = p.Transition(s.Index, plan.Failed, err.Error(), now())
//				continue
//			}
//			_ = p.Transition(s.Index, plan.Completed, answer, now())
//		}
//	}
//
// Everything here is plain data with a stable JSON form; running a plan is
// the task agent's job.
//
// # State machine
//
// A step starts Pending and moves one way only: Pending → Running →
// Completed, Failed or Skipped, or Pending → Skipped. Plan.Transition
// refuses every other move with a *TransitionError, and refuses to start a
// step whose dependencies have not completed. A retry is a new Plan.
//
// # Scheduling
//
// Steps run in plan order. A run of adjacent steps marked Independent runs
// together; any other step runs alone. A step also waits for the earlier
// steps it DependsOn, and can never run once one of them failed or was
// skipped: Plan.Blocked lists such steps. Plan.Next returns the steps that
// may start now.
//
// # Parsing
//
// A PlanParser turns model text into a Plan. JSONParser reads the format
// that Instructions describes, tolerating a code fence and prose around the
// JSON, and reports each problem as a *PlanError naming the step and field.
//
// # Ownership
//
// A Plan is not safe for concurrent use. It belongs to the goroutine running
// it; other goroutines, and StepHooks that keep it, get a Clone.
package plan
