package supervisor

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// SessionOptions configures the strategy of session actors. The zero value
// restarts a failing session up to 3 times a minute.
type SessionOptions struct {
	// Decider maps a failure to a directive. Nil means SessionDecider().
	Decider Decider
	// Budget limits restarts per session. Nil means NewBudget(BudgetOptions{}).
	Budget *Budget
	// Logger receives one event per decision; the zero Logger discards them.
	Logger zerolog.Logger
	// OnStop, when set, is called on the supervisor's goroutine before a
	// failing session is stopped, with the reason: the failure itself, or a
	// *BudgetExhaustedError wrapping it.
	OnStop func(child *actor.PID, reason error)
}

// NewSessionStrategy returns the strategy that supervises session actors.
// A session whose failure the decider answers with Restart (or Retry) is
// restarted and rebuilds its state from its journal, unless its budget is
// exhausted; then, as for Stop, it is stopped and OnStop is told why.
// Resume resumes it; Escalate hands the failure to the supervisor's parent.
func NewSessionStrategy(opts SessionOptions) actor.SupervisorStrategy {
	s := &sessionStrategy{decider: opts.Decider, budget: opts.Budget, logger: opts.Logger, onStop: opts.OnStop}
	if s.decider == nil {
		s.decider = SessionDecider()
	}
	if s.budget == nil {
		s.budget = NewBudget(BudgetOptions{})
	}
	return s
}

type sessionStrategy struct {
	decider Decider
	budget  *Budget
	logger  zerolog.Logger
	onStop  func(*actor.PID, error)
}

var _ actor.SupervisorStrategy = (*sessionStrategy)(nil)

func (s *sessionStrategy) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	d := s.decider.Decide(reason)
	err := AsError(reason)
	ev := s.logger.Warn().Str("child", child.GetId()).AnErr("reason", err).Str("directive", d.String())
	switch d {
	case Resume:
		ev.Msg("supervisor: resuming session")
		sup.ResumeChildren(child)
	case Restart, Retry:
		if exhausted := s.budget.Fail(child.GetId(), reason); exhausted != nil {
			s.logger.Error().Str("child", child.GetId()).Err(exhausted).Msg("supervisor: stopping session")
			s.stop(sup, child, exhausted)
			return
		}
		ev.Int("failures", s.budget.Failures(child.GetId())).Msg("supervisor: restarting session")
		sup.RestartChildren(child)
	case Escalate:
		ev.Msg("supervisor: escalating session failure")
		sup.EscalateFailure(reason, message)
	default:
		ev.Msg("supervisor: stopping session")
		s.stop(sup, child, err)
	}
}

func (s *sessionStrategy) stop(sup actor.Supervisor, child *actor.PID, reason error) {
	s.budget.Reset(child.GetId())
	if s.onStop != nil {
		s.onStop(child, reason)
	}
	sup.StopChildren(child)
}
