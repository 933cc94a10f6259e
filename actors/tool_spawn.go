package actors

// This file holds spawnTool, the spawn_agent tool: the session that runs a
// call spawns the sub-agent as its own child (see session_sub.go) and
// completes the call with the sub-agent's answer.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// SpawnAgentToolName is the name of the tool that spawns a sub-agent.
const SpawnAgentToolName = "spawn_agent"

// inlineAgentName names the agent of a sub-agent spawned with an inline
// system prompt.
const inlineAgentName = "subagent"

// spawnParams are the arguments of spawn_agent: either an agent profile or
// an inline system prompt, and the task.
type spawnParams struct {
	Agent        string       `json:"agent,omitempty" jsonschema:"description=Name of the agent profile to run the task. Leave empty to give system_prompt instead."`
	SystemPrompt string       `json:"system_prompt,omitempty" jsonschema:"description=System prompt of an ad-hoc sub-agent, when no agent profile is named."`
	Tools        []string     `json:"tools,omitempty" jsonschema:"description=Tools the ad-hoc sub-agent may call (names or patterns); only tools you may call yourself. Omit for the same tools as you."`
	Task         string       `json:"task" jsonschema:"description=The complete, self-contained task. The sub-agent sees nothing of this conversation but this text."`
	Budget       *spawnBudget `json:"budget,omitempty" jsonschema:"description=Optional limits of the sub-agent and everything it spawns."`
}

// spawnBudget is the budget a spawn_agent call may ask for. Zero fields
// keep the runtime's limits.
type spawnBudget struct {
	MaxTokens     int64   `json:"max_tokens,omitempty" jsonschema:"description=Total tokens,minimum=0"`
	MaxCost       float64 `json:"max_cost,omitempty" jsonschema:"description=Total cost,minimum=0"`
	MaxSeconds    float64 `json:"max_seconds,omitempty" jsonschema:"description=Wall-clock seconds,minimum=0"`
	MaxRoundTrips int     `json:"max_round_trips,omitempty" jsonschema:"description=Model calls,minimum=0"`
}

func (b *spawnBudget) budget() Budget {
	if b == nil {
		return Budget{}
	}
	return Budget{MaxTokens: b.MaxTokens, MaxCost: b.MaxCost, MaxTime: time.Duration(b.MaxSeconds * float64(time.Second)), MaxRoundTrips: b.MaxRoundTrips}
}

// spawnTool is the spawn_agent tool.
type spawnTool struct{ rt *Runtime }

var (
	_ actorTool[spawnParams]          = (*spawnTool)(nil)
	_ toolsys.Prechecker[spawnParams] = (*spawnTool)(nil)
	_ toolsys.IdempotentTool          = (*spawnTool)(nil)
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
func (t *spawnTool) Precheck(p spawnParams) error {
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

// Execute refuses: a sub-agent is a child of the session whose turn
// spawns it, so the session carries the call out itself (start).
func (t *spawnTool) Execute(context.Context, spawnParams, *toolsys.Context) (toolsys.Result, error) {
	return toolsys.ErrorResult("%s runs only inside a session's turn", SpawnAgentToolName), nil
}

// start spawns the sub-agent of the call, unless the journal holds its
// result already, and leaves the call to be completed with its answer.
func (t *spawnTool) start(a *sessionActor, run *toolRun, p spawnParams) (toolsys.Result, bool) {
	rt := a.rt
	depth := a.depth() + 1
	if depth > rt.swarm.MaxDepth {
		return toolsys.ErrorResult("spawn_agent: the maximum sub-agent depth of %d is reached; carry out the task yourself", rt.swarm.MaxDepth), true
	}
	ag, err := rt.subAgent(a.agent(), p)
	if err != nil {
		return toolsys.ErrorResult("spawn_agent: %v", err), true
	}
	callID := run.call.ID
	if o := a.st.Open; o != nil {
		if sa, ok := o.SubAgents[callID]; ok && sa.Finished != nil {
			return finishedResult(*sa.Finished, true), true
		}
	}
	child := childSessionID(a.id, callID)
	limit := rt.swarm.Budget.tighten(p.Budget.budget())
	var parent *budgetTracker
	if a.c.spec != nil {
		parent = a.c.spec.budget
	}
	if parent != nil {
		limit = limit.tighten(parent.remaining())
	}
	if limit.MaxRoundTrips > 0 {
		l := ag.limits
		l.MaxRoundTrips = min(l.MaxRoundTrips, limit.MaxRoundTrips)
		ag = &agent{AgentProfile: ag.AgentProfile, tmpl: ag.tmpl, limits: l}
	}
	run.child = child
	a.spawn(&spawnReq{turn: a.turn.index, callID: callID, child: child, task: p.Task, limit: limit, run: run,
		spec: &subSpec{agent: ag, depth: depth, budget: newBudgetTracker(parent, child, limit)}})
	return toolsys.Result{}, false
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
func (rt *Runtime) subAgent(parent *agent, p spawnParams) (*agent, error) {
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
			if parent.allows(name) || parent.Tools == nil {
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
	return &agent{AgentProfile: prof, tmpl: newPromptTemplate(tmpl), limits: parent.limits}, nil
}
