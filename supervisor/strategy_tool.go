package supervisor

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// ToolOptions configures the strategy of tool executors.
type ToolOptions struct {
	// Decider maps a failure to a directive. Nil means ToolDecider().
	Decider Decider
	// Logger receives one event per failure; the zero Logger discards them.
	Logger zerolog.Logger
	// OnFailure, when set, is called on the supervisor's goroutine with the
	// failing executor and the failure (a panic becomes a *PanicError), so
	// that the supervisor records an error result for the call.
	OnFailure func(child *actor.PID, reason error)
}

// NewToolStrategy returns the strategy that supervises tool executors. A
// tool executor runs one call and is never restarted, since a call may have
// side effects: unless the decider answers Escalate, the failing executor
// is stopped and OnFailure is told why, and the turn goes on.
func NewToolStrategy(opts ToolOptions) actor.SupervisorStrategy {
	s := &toolStrategy{decider: opts.Decider, logger: opts.Logger, onFailure: opts.OnFailure}
	if s.decider == nil {
		s.decider = ToolDecider()
	}
	return s
}

type toolStrategy struct {
	decider   Decider
	logger    zerolog.Logger
	onFailure func(*actor.PID, error)
}

var _ actor.SupervisorStrategy = (*toolStrategy)(nil)

func (s *toolStrategy) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	d := s.decider.Decide(reason)
	err := AsError(reason)
	s.logger.Warn().Str("child", child.GetId()).AnErr("reason", err).Str("directive", d.String()).Msg("supervisor: tool executor failed")
	if d == Escalate {
		sup.EscalateFailure(reason, message)
		return
	}
	if s.onFailure != nil {
		s.onFailure(child, err)
	}
	sup.StopChildren(child)
}
