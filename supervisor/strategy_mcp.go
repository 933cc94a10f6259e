package supervisor

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// MCPOptions configures the strategy of MCP connection actors. The zero
// value restarts a failed connection after 100ms, 200ms, 400ms, ... (up to
// 30s, with 25% jitter), and gives up after 5 failures within a minute.
type MCPOptions struct {
	// Decider maps a failure to a directive. Nil means ConnectionDecider().
	Decider Decider
	// Budget limits restarts per connection. Nil means 5 failures within a
	// minute on Clock.
	Budget *Budget
	// Backoff computes the delay before each restart.
	Backoff Backoff
	// Clock schedules the restarts. Nil means SystemClock().
	Clock Clock
	// Rand draws the jitter. Nil means NewRand(1).
	Rand Rand
	// Logger receives one event per decision; the zero Logger discards them.
	Logger zerolog.Logger
	// OnStop, when set, is called before a connection is stopped for good,
	// with the failure or a *BudgetExhaustedError wrapping it.
	OnStop func(child *actor.PID, reason error)
}

// NewMCPStrategy returns the strategy that supervises MCP connection
// actors: a failed connection stays suspended (calls queue in its mailbox)
// and is restarted after an exponential backoff, until its budget is
// exhausted; then, or when the decider answers Stop, it is stopped and
// OnStop is told why.
func NewMCPStrategy(opts MCPOptions) actor.SupervisorStrategy {
	s := &mcpStrategy{decider: opts.Decider, budget: opts.Budget, backoff: opts.Backoff, clock: opts.Clock, rand: opts.Rand, logger: opts.Logger, onStop: opts.OnStop}
	if s.decider == nil {
		s.decider = ConnectionDecider()
	}
	if s.clock == nil {
		s.clock = SystemClock()
	}
	if s.budget == nil {
		s.budget = NewBudget(BudgetOptions{MaxFailures: 5, Window: time.Minute, Clock: s.clock})
	}
	if s.rand == nil {
		s.rand = NewRand(1)
	}
	return s
}

type mcpStrategy struct {
	decider Decider
	budget  *Budget
	backoff Backoff
	clock   Clock
	rand    Rand
	logger  zerolog.Logger
	onStop  func(*actor.PID, error)
}

var _ actor.SupervisorStrategy = (*mcpStrategy)(nil)

func (s *mcpStrategy) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	d := s.decider.Decide(reason)
	err := AsError(reason)
	switch d {
	case Resume:
		s.logger.Warn().Str("child", child.GetId()).AnErr("reason", err).Msg("supervisor: resuming connection")
		sup.ResumeChildren(child)
	case Escalate:
		sup.EscalateFailure(reason, message)
	case Restart, Retry:
		if exhausted := s.budget.Fail(child.GetId(), reason); exhausted != nil {
			s.logger.Error().Str("child", child.GetId()).Err(exhausted).Msg("supervisor: stopping connection")
			s.stop(sup, child, exhausted)
			return
		}
		n := s.budget.Failures(child.GetId())
		delay := s.backoff.Delay(n, s.rand)
		s.logger.Warn().Str("child", child.GetId()).AnErr("reason", err).Int("failures", n).Dur("backoff", delay).Msg("supervisor: restarting connection")
		s.clock.AfterFunc(delay, func() { sup.RestartChildren(child) })
	default:
		s.logger.Error().Str("child", child.GetId()).AnErr("reason", err).Msg("supervisor: stopping connection")
		s.stop(sup, child, err)
	}
}

func (s *mcpStrategy) stop(sup actor.Supervisor, child *actor.PID, reason error) {
	s.budget.Reset(child.GetId())
	if s.onStop != nil {
		s.onStop(child, reason)
	}
	sup.StopChildren(child)
}
