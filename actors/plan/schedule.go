package plan

// Steps run in plan order. A step that is not Independent runs alone, after
// every earlier step has reached a terminal status. A run of adjacent
// Independent steps forms a group that runs together once everything before
// it is terminal; the step after the group waits for the whole group.
// Within a group, and everywhere else, a step also waits for its DependsOn.

// Next returns copies of the steps that may start now: the pending steps,
// all of whose dependencies have completed, in the first part of the plan
// that is not finished. That is one sequential step, or the ready members
// of a group of independent steps. It returns nil while that part is
// running or blocked, and when the plan is done.
//
// For a plan that passes Validate and has no step Running, Next or Blocked
// returns at least one step until the plan is Done, so a loop that starts
// the Next steps and skips the Blocked ones always finishes.
func (p *Plan) Next() []Step {
	first := -1
	for i, s := range p.Steps {
		if !s.Status.IsTerminal() {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	if !p.Steps[first].Independent {
		if p.ready(first) {
			return []Step{p.Steps[first].clone()}
		}
		return nil
	}
	var next []Step
	for i := first; i < len(p.Steps) && p.Steps[i].Independent; i++ {
		if p.ready(i) {
			next = append(next, p.Steps[i].clone())
		}
	}
	return next
}

// ready reports whether step i is pending and every dependency completed.
func (p *Plan) ready(i int) bool {
	s := p.Steps[i]
	if s.Status != Pending {
		return false
	}
	for _, d := range s.DependsOn {
		if st, ok := p.status(d); !ok || st != Completed {
			return false
		}
	}
	return true
}

// Blocked returns copies of the pending steps that can never run because a
// dependency, directly or through other dependencies, failed or was skipped.
// The owner of the plan usually moves them to Skipped.
func (p *Plan) Blocked() []Step {
	doomed := make([]bool, len(p.Steps))
	var blocked []Step
	for i, s := range p.Steps {
		if s.Status == Failed || s.Status == Skipped {
			doomed[i] = true
			continue
		}
		if s.Status != Pending {
			continue
		}
		for _, d := range s.DependsOn {
			if d >= 0 && d < i && doomed[d] {
				doomed[i] = true
				blocked = append(blocked, s.clone())
				break
			}
		}
	}
	return blocked
}

// Done reports whether every step has reached a terminal status.
func (p *Plan) Done() bool {
	for _, s := range p.Steps {
		if !s.Status.IsTerminal() {
			return false
		}
	}
	return true
}

// Failed returns copies of the steps that failed, in plan order.
func (p *Plan) Failed() []Step {
	var failed []Step
	for _, s := range p.Steps {
		if s.Status == Failed {
			failed = append(failed, s.clone())
		}
	}
	return failed
}
