package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// SpawnAgentToolName is the name of the tool that spawns a sub-agent.
const SpawnAgentToolName = "spawn_agent"

// inlineAgentName names the agent of a sub-agent spawned with an inline
// system prompt.
const inlineAgentName = "subagent"

// ErrBudgetExhausted is wrapped by every *BudgetError.
var ErrBudgetExhausted = errors.New("actors: sub-agent budget exhausted")

// BudgetError says that a sub-agent subtree was stopped because it spent
// its budget (tokens, cost, round trips or wall time).
type BudgetError struct {
	// Child is the sub-agent session that was stopped.
	Child string
	// Reason names the budget, as in "budget of 500 tokens exhausted".
	Reason string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("sub-agent %s stopped: %s", e.Child, e.Reason)
}

// Unwrap returns ErrBudgetExhausted.
func (e *BudgetError) Unwrap() error { return ErrBudgetExhausted }

// SpawnAgentParams are the arguments of spawn_agent: either an agent
// profile or an inline system prompt, and the task.
type SpawnAgentParams struct {
	Agent        string       `json:"agent,omitempty" jsonschema:"description=Name of the agent profile to run the task. Leave empty to give system_prompt instead."`
	SystemPrompt string       `json:"system_prompt,omitempty" jsonschema:"description=System prompt of an ad-hoc sub-agent, when no agent profile is named."`
	Tools        []string     `json:"tools,omitempty" jsonschema:"description=Tools the ad-hoc sub-agent may call (names or patterns); only tools you may call yourself. Omit for the same tools as you."`
	Task         string       `json:"task" jsonschema:"description=The complete, self-contained task. The sub-agent sees nothing of this conversation but this text."`
	Budget       *SpawnBudget `json:"budget,omitempty" jsonschema:"description=Optional limits of the sub-agent and everything it spawns."`
}

// SpawnBudget is the budget a spawn_agent call may ask for. Zero fields
// keep the runtime's limits.
type SpawnBudget struct {
	MaxTokens     int64   `json:"max_tokens,omitempty" jsonschema:"description=Total tokens,minimum=0"`
	MaxCost       float64 `json:"max_cost,omitempty" jsonschema:"description=Total cost,minimum=0"`
	MaxSeconds    float64 `json:"max_seconds,omitempty" jsonschema:"description=Wall-clock seconds,minimum=0"`
	MaxRoundTrips int     `json:"max_round_trips,omitempty" jsonschema:"description=Model calls,minimum=0"`
}

func (b *SpawnBudget) budget() Budget {
	if b == nil {
		return Budget{}
	}
	return Budget{MaxTokens: b.MaxTokens, MaxCost: b.MaxCost, MaxTime: time.Duration(b.MaxSeconds * float64(time.Second)), MaxRoundTrips: b.MaxRoundTrips}
}

// caller is what a built-in tool knows of the session that called it.
type caller struct {
	pid     *actor.PID
	entry   *entry
	session string
	turn    int
	callID  string
	agent   *agent
	depth   int
	budget  *budgetTracker
}

type callerKey struct{}

func withCaller(ctx context.Context, c *caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// callerFrom returns the session that runs the tool call of ctx.
func callerFrom(ctx context.Context) (*caller, error) {
	c, ok := ctx.Value(callerKey{}).(*caller)
	if !ok {
		return nil, errors.New("actors: this tool runs only inside a session's turn")
	}
	return c, nil
}

// callerFor describes the session to a built-in tool call.
func (a *sessionActor) callerFor(call messages.ToolCall) *caller {
	c := &caller{pid: a.actx.Self(), entry: a.e, session: a.id, turn: a.turn.index, callID: call.ID, agent: a.agent(), depth: a.depth()}
	if a.e.sub != nil {
		c.budget = a.e.sub.budget
	}
	return c
}

// spawnTool is the spawn_agent tool.
type spawnTool struct{ rt *Runtime }

var (
	_ toolsys.Typed[SpawnAgentParams]      = (*spawnTool)(nil)
	_ toolsys.Prechecker[SpawnAgentParams] = (*spawnTool)(nil)
	_ toolsys.IdempotentTool               = (*spawnTool)(nil)
)

func (t *spawnTool) Name() string { return SpawnAgentToolName }

func (t *spawnTool) Description() string {
	var b strings.Builder
	b.WriteString("Delegate a task to a sub-agent that works in a fresh context and returns its final answer. Several calls in one reply run in parallel.")
	if names := t.rt.agentNames(); len(names) > 0 {
		b.WriteString(" Agent profiles: ")
		b.WriteString(strings.Join(names, ", "))
		b.WriteString(".")
	}
	return b.String()
}

func (t *spawnTool) Permission() toolsys.Permission { return toolsys.PermNone }
func (t *spawnTool) SecretParams() []string         { return nil }

// Idempotent reports true: running a spawn again after a crash reuses the
// journaled result, or resumes the sub-agent from its own journal.
func (t *spawnTool) Idempotent() bool { return true }

// Precheck requires a task and exactly one of agent and system_prompt.
func (t *spawnTool) Precheck(p SpawnAgentParams) error {
	switch {
	case strings.TrimSpace(p.Task) == "":
		return errors.New("task is empty")
	case p.Agent != "" && p.SystemPrompt != "":
		return errors.New("give agent or system_prompt, not both")
	case p.Agent == "" && strings.TrimSpace(p.SystemPrompt) == "":
		return errors.New("give agent (a profile name) or system_prompt")
	case p.Agent != "" && p.Tools != nil:
		return errors.New("tools applies to a system_prompt sub-agent only; an agent profile has its own tools")
	}
	return nil
}

// Execute spawns the sub-agent, runs the task and returns its answer.
func (t *spawnTool) Execute(ctx context.Context, p SpawnAgentParams, _ *toolsys.Context) (toolsys.Result, error) {
	rt := t.rt
	c, err := callerFrom(ctx)
	if err != nil {
		return toolsys.Result{}, err
	}
	depth := c.depth + 1
	if depth > rt.swarm.cfg.MaxDepth {
		return toolsys.ErrorResult("spawn_agent: the maximum sub-agent depth of %d is reached; carry out the task yourself", rt.swarm.cfg.MaxDepth), nil
	}
	ag, err := rt.subAgent(c.agent, p)
	if err != nil {
		return toolsys.ErrorResult("spawn_agent: %v", err), nil
	}
	child := childSessionID(c.session, c.callID)
	limit := rt.swarm.cfg.Budget.tighten(p.Budget.budget())
	if c.budget != nil {
		limit = limit.tighten(c.budget.remaining())
	}
	if limit.MaxRoundTrips > 0 {
		l := ag.limits
		l.MaxRoundTrips = min(l.MaxRoundTrips, limit.MaxRoundTrips)
		ag = &agent{AgentProfile: ag.AgentProfile, tmpl: ag.tmpl, limits: l}
	}

	release, err := rt.swarm.acquire(ctx, c.session)
	if err != nil {
		return toolsys.ErrorResult("spawn_agent: %v", err), nil
	}
	defer release()

	spec := &subSpec{agent: ag, depth: depth, budget: newBudgetTracker(c.budget, child, limit)}
	run := newSubRun(ctx, c.pid, c.entry, c.callID, child, p.Task, limit, spec)
	defer run.stop(nil)
	r, err := rt.spawnSub(run, &subSpawnCmd{turn: c.turn, callID: c.callID, child: child, task: p.Task, spec: spec, stop: run.stop})
	switch {
	case err != nil:
		return toolsys.ErrorResult("spawn_agent: sub-agent %s was not started: %v", child, err), nil
	case r.finished != nil:
		return finishedResult(*r.finished, true), nil
	}
	run.spawn = r
	fin, _ := rt.driveSub(ctx, run)
	return finishedResult(fin, false), nil
}

// finishedResult is the tool result of a finished sub-agent: its answer, or
// an error result saying why it stopped.
func finishedResult(f messages.SubAgentFinished, reused bool) toolsys.Result {
	meta := map[string]any{
		"child":             f.Child,
		"outcome":           string(f.Outcome),
		"prompt_tokens":     f.Usage.PromptTokens,
		"completion_tokens": f.Usage.CompletionTokens,
		"total_tokens":      f.Usage.TotalTokens,
		"cost":              f.Cost,
	}
	if reused {
		meta["reused"] = true
	}
	return toolsys.Result{Content: f.Result, IsError: f.Outcome != messages.OutcomeCompleted, Metadata: meta}
}

// subAgent compiles the agent a spawn asks for: a profile, or an ad-hoc
// agent whose tools are those of parent that it lists.
func (rt *Runtime) subAgent(parent *agent, p SpawnAgentParams) (*agent, error) {
	if p.Agent != "" {
		ag := rt.agents[p.Agent]
		if ag == nil {
			return nil, fmt.Errorf("%w %q; the profiles are %s", ErrUnknownAgent, p.Agent, strings.Join(rt.agentNames(), ", "))
		}
		return ag, nil
	}
	tools := parent.Tools
	if p.Tools != nil {
		var refused []string
		tools = []string{}
		for _, name := range p.Tools {
			if parent.allowed(name) || parent.Tools == nil {
				tools = append(tools, name)
			} else {
				refused = append(refused, name)
			}
		}
		if len(refused) > 0 {
			return nil, fmt.Errorf("tools %s are not available to you, so a sub-agent cannot have them", strings.Join(refused, ", "))
		}
	}
	tmpl, err := compileTemplate(inlineAgentName, "{{.SystemPrompt}}")
	if err != nil {
		return nil, err
	}
	prof := AgentProfile{Name: inlineAgentName, Description: "ad-hoc sub-agent", Model: parent.Model,
		Vars: map[string]any{"SystemPrompt": p.SystemPrompt}, Tools: slices.Clone(tools), Limits: parent.Limits}
	return &agent{AgentProfile: prof, tmpl: tmpl, limits: parent.limits}, nil
}

// agentNames lists the agent profiles, sorted.
func (rt *Runtime) agentNames() []string {
	names := make([]string, 0, len(rt.agents))
	for name := range rt.agents {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
