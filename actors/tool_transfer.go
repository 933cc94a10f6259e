package actors

// This file holds transferTool, the transfer_to_agent tool: the session
// that runs a call switches its own agent profile.

import (
	"context"
	"fmt"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// TransferToolName is the name of the hand-off tool.
const TransferToolName = "transfer_to_agent"

// transferParams are the arguments of transfer_to_agent.
type transferParams struct {
	Agent  string `json:"agent" jsonschema:"description=Name of the agent profile to hand the conversation to."`
	Reason string `json:"reason,omitempty" jsonschema:"description=Why, in a sentence, for the agent taking over."`
}

// transferTool is the transfer_to_agent tool: swarm-style routing, where
// the agent that answers hands the conversation to a better-suited one.
type transferTool struct{ rt *Runtime }

var _ actorTool[transferParams] = (*transferTool)(nil)

func (t *transferTool) Name() string { return TransferToolName }

func (t *transferTool) Description() string {
	var b strings.Builder
	b.WriteString("Hand this conversation over to another agent, which carries on with its own instructions and tools from your next step. Agents:")
	for _, name := range t.rt.agentNames() {
		b.WriteString("\n- ")
		b.WriteString(name)
		if d := t.rt.agents[name].Description; d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
	}
	return b.String()
}

func (t *transferTool) Permission() toolsys.Permission { return toolsys.PermNone }
func (t *transferTool) SecretParams() []string         { return nil }

// Idempotent reports true: a transfer to the agent already active does
// nothing.
func (t *transferTool) Idempotent() bool { return true }

// Execute refuses: the switch is the session's, so the session carries the
// call out itself (start).
func (t *transferTool) Execute(context.Context, transferParams, *toolsys.Context) (toolsys.Result, error) {
	return toolsys.ErrorResult("%s runs only inside a session's turn", TransferToolName), nil
}

// start journals the switch at once: the turn's next model call is the
// new agent's.
func (t *transferTool) start(a *sessionActor, _ *toolRun, p transferParams) (toolsys.Result, bool) {
	switch {
	case a.c.spec != nil:
		return toolsys.ErrorResult("transfer_to_agent: a sub-agent cannot hand its task to another agent"), true
	case a.rt.agents[p.Agent] == nil:
		return toolsys.ErrorResult("transfer_to_agent: %v %q; the agents are %s", ErrUnknownAgent, p.Agent, strings.Join(a.rt.agentNames(), ", ")), true
	}
	a.applySwitch(p.Agent, p.Reason)
	return toolsys.Result{Content: fmt.Sprintf("Transferred to agent %q.", p.Agent), Metadata: map[string]any{"agent": p.Agent}}, true
}
