package actors

// This file holds TaskAgent, which writes a plan with its session's model
// and carries it out.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agcore/agcore/actors/plan"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// TaskAgentConfig configures a TaskAgent.
type TaskAgentConfig struct {
	// Session is the id of the session that writes the plan and runs its
	// sequential steps. Required.
	Session string
	// Parser reads the plan the model writes. Nil means plan.JSONParser{}.
	Parser plan.PlanParser
	// Instructions tell the model how to write a plan Parser accepts. Empty
	// means plan.Instructions(), which suits the default parser.
	Instructions string
	// OnPlanStepComplete is called each time a step reaches a terminal
	// status. Nil means no hook.
	OnPlanStepComplete plan.StepHook
	// StepBudget bounds each step run as a sub-agent (within
	// Config.SubAgents.Budget). The zero value adds no bound.
	StepBudget Budget
}

// TaskAgent breaks a goal into a plan and carries it out: the model of its
// session writes the plan, sequential steps run as turns of that session,
// and steps the plan marks independent (or assigns to another agent
// profile) run as sub-agents of that session, each group in parallel.
// Cancelling or deleting the session stops them; their usage counts in
// the session's. It is safe for
// concurrent use, but runs of one TaskAgent share its session and so
// queue behind each other's turns.
type TaskAgent struct {
	rt  *Runtime
	cfg TaskAgentConfig
}

// ErrPlanStuck is returned by ExecutePlan when no step of an unfinished
// plan can start (a step is Running: another owner runs the plan).
var ErrPlanStuck = errors.New("actors: plan cannot progress")

// NewTaskAgent returns a task agent over rt. It fails with an error
// wrapping ErrConfig when cfg.Session is not a valid session id.
func NewTaskAgent(rt *Runtime, cfg TaskAgentConfig) (*TaskAgent, error) {
	if err := memory.ValidateSession(cfg.Session); err != nil {
		return nil, configErr("TaskAgentConfig.Session", "%v", err)
	}
	if cfg.Parser == nil {
		cfg.Parser = plan.JSONParser{}
	}
	if cfg.Instructions == "" {
		cfg.Instructions = plan.Instructions()
	}
	return &TaskAgent{rt: rt, cfg: cfg}, nil
}

// Run asks the model for a plan to reach goal, then executes it (see
// ExecutePlan). A plan the parser refuses gives an error wrapping its
// *plan.PlanError, which names the step and field at fault.
func (ta *TaskAgent) Run(ctx context.Context, goal string) (*plan.Plan, error) {
	sess, err := ta.rt.Open(ctx, ta.cfg.Session)
	if err != nil {
		return nil, err
	}
	res, err := sess.Submit(ctx, messages.UserText("Goal: "+goal+"\n\n"+ta.cfg.Instructions))
	if err != nil {
		return nil, fmt.Errorf("actors: task agent: planning: %w", err)
	}
	if res.Outcome != messages.OutcomeCompleted {
		return nil, fmt.Errorf("actors: task agent: planning ended %s: %s", res.Outcome, res.Reason)
	}
	p, err := ta.cfg.Parser.Parse(res.Text)
	if err != nil {
		return nil, fmt.Errorf("actors: task agent: the model's plan: %w", err)
	}
	if p.Goal == "" {
		p.Goal = goal
	}
	return ta.ExecutePlan(ctx, p)
}

// ExecutePlan runs p's steps in plan order until every step is terminal,
// and returns p with their statuses and results. Steps whose dependencies
// failed are Skipped; a step that fails does not stop the others. A step
// that is neither independent nor assigned to an agent profile runs as a
// turn of the task agent's session; the others run as sub-agents, the
// ready members of a group of independent steps in parallel. Each terminal
// step fires OnPlanStepComplete. It returns an error (and p as far as it
// got) for an invalid plan, a plan with a Running step, or when ctx ends.
func (ta *TaskAgent) ExecutePlan(ctx context.Context, p *plan.Plan) (*plan.Plan, error) {
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("actors: task agent: %w", err)
	}
	for _, s := range p.Steps {
		if s.Status == plan.Running {
			return p, fmt.Errorf("%w: step %d is already running", ErrPlanStuck, s.Index)
		}
	}
	sess, err := ta.rt.Open(ctx, ta.cfg.Session)
	if err != nil {
		return p, err
	}
	for !p.Done() {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		for _, s := range p.Blocked() {
			if err := ta.finish(ctx, p, s.Index, plan.Skipped, "a step it depends on did not complete"); err != nil {
				return p, err
			}
		}
		next := p.Next()
		if len(next) == 0 {
			if p.Done() {
				break
			}
			return p, fmt.Errorf("%w: no step is ready", ErrPlanStuck)
		}
		for _, s := range next {
			if err := p.Transition(s.Index, plan.Running, "", ta.rt.clock.Now()); err != nil {
				return p, fmt.Errorf("actors: task agent: %w", err)
			}
		}
		prompts := make([]string, len(next))
		for i, s := range next {
			prompts[i] = stepPrompt(p, s)
		}
		if len(next) == 1 && !next[0].Independent && next[0].Agent == "" {
			text, runErr := ta.runOwn(ctx, sess, prompts[0])
			if err := ta.settle(ctx, p, next[0].Index, text, runErr); err != nil {
				return p, err
			}
			continue
		}
		results := make([]struct {
			text string
			err  error
		}, len(next))
		var wg sync.WaitGroup
		for i, s := range next {
			wg.Go(func() { results[i].text, results[i].err = ta.runSub(ctx, p, s, prompts[i]) })
		}
		wg.Wait()
		for i, s := range next {
			if err := ta.settle(ctx, p, s.Index, results[i].text, results[i].err); err != nil {
				return p, err
			}
		}
	}
	return p, ctx.Err()
}

// settle moves a running step to Completed with text, or to Failed.
func (ta *TaskAgent) settle(ctx context.Context, p *plan.Plan, index int, text string, err error) error {
	if err != nil {
		return ta.finish(ctx, p, index, plan.Failed, err.Error())
	}
	return ta.finish(ctx, p, index, plan.Completed, text)
}

// finish makes a terminal transition and fires the hook.
// A refused transition (the plan changed behind the agent's back) is
// returned as an error wrapping the *plan.TransitionError.
func (ta *TaskAgent) finish(ctx context.Context, p *plan.Plan, index int, to plan.StepStatus, detail string) error {
	if err := p.Transition(index, to, detail, ta.rt.clock.Now()); err != nil {
		return fmt.Errorf("actors: task agent: %w", err)
	}
	if ta.cfg.OnPlanStepComplete != nil {
		ta.cfg.OnPlanStepComplete(ctx, p, p.Steps[index])
	}
	return nil
}

// runOwn runs a step as a turn of the task agent's session.
func (ta *TaskAgent) runOwn(ctx context.Context, sess *Session, prompt string) (string, error) {
	res, err := sess.Submit(ctx, messages.UserText(prompt))
	if err != nil {
		return "", err
	}
	if res.Outcome != messages.OutcomeCompleted {
		return "", fmt.Errorf("the turn ended %s: %s", res.Outcome, res.Reason)
	}
	return res.Text, nil
}

// runSub runs a step as a sub-agent of the task agent's session: a child
// of its actor, so that cancelling or deleting the session stops it, with
// an id derived from the plan and step, so that after a crash running the
// plan again resumes the step from its journal (or reuses its result).
// The step's usage counts in the session's.
func (ta *TaskAgent) runSub(ctx context.Context, p *plan.Plan, s plan.Step, prompt string) (string, error) {
	rt := ta.rt
	ag := rt.agents[s.Agent]
	if s.Agent == "" {
		ag = rt.agents[rt.defaultAgent]
	}
	if ag == nil {
		return "", fmt.Errorf("%w %q", ErrUnknownAgent, s.Agent)
	}
	callID := fmt.Sprintf("plan-%s-step-%d", p.ID, s.Index)
	id := childSessionID(ta.cfg.Session, callID)
	tail, err := rt.journal.Tail(ctx, id)
	if err != nil {
		return "", fmt.Errorf("actors: task agent: step %d: %w", s.Index, err)
	}
	limit := rt.swarm.Budget.tighten(ta.cfg.StepBudget)
	reply := make(chan stepResult, 1)
	// The step reaches the session's actor, activating it.
	ref, err := rt.post(ta.cfg.Session, &planStepCmd{callID: callID, child: id, task: prompt, limit: limit, known: tail > 0,
		spec: &subSpec{agent: ag, depth: 1, budget: newBudgetTracker(nil, id, limit)}, reply: reply})
	if err != nil {
		return "", err
	}
	select {
	case r := <-reply:
		if r.err != nil {
			return "", r.err
		}
		return r.fin.Result, nil
	case <-ref.done:
		select {
		case r := <-reply:
			if r.err != nil {
				return "", r.err
			}
			return r.fin.Result, nil
		default:
		}
		return "", ref.stopped()
	case <-ctx.Done():
		// The step's sub-agent stops and reports to the session.
		rt.postLive(ta.cfg.Session, &stepCancelCmd{child: id, reason: context.Cause(ctx).Error()})
		return "", ctx.Err()
	}
}

// stepPrompt is the request of one step: the goal, the results of the
// steps it depends on, and its description.
func stepPrompt(p *plan.Plan, s plan.Step) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Overall goal: %s\n", p.Goal)
	for _, d := range s.DependsOn {
		fmt.Fprintf(&b, "\nResult of step %d (%s):\n%s\n", d, p.Steps[d].Description, p.Steps[d].Result)
	}
	fmt.Fprintf(&b, "\nYour step (%d of %d): %s", s.Index+1, len(p.Steps), s.Description)
	return b.String()
}
