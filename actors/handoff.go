package actors

import (
	"context"
	"fmt"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// TransferToolName is the name of the hand-off tool.
const TransferToolName = "transfer_to_agent"

// TransferParams are the arguments of transfer_to_agent.
type TransferParams struct {
	Agent  string `json:"agent" jsonschema:"description=Name of the agent profile to hand the conversation to."`
	Reason string `json:"reason,omitempty" jsonschema:"description=Why, in a sentence, for the agent taking over."`
}

// transferTool is the transfer_to_agent tool: swarm-style routing, where
// the agent that answers hands the conversation to a better-suited one.
type transferTool struct{ rt *Runtime }

var _ toolsys.Typed[TransferParams] = (*transferTool)(nil)

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

// Execute asks the session to switch its agent.
func (t *transferTool) Execute(ctx context.Context, p TransferParams, _ *toolsys.Context) (toolsys.Result, error) {
	c, err := callerFrom(ctx)
	if err != nil {
		return toolsys.Result{}, err
	}
	reply := make(chan error, 1)
	t.rt.system.Root.Send(c.pid, &transferCmd{turn: c.turn, name: p.Agent, reason: p.Reason, reply: reply})
	select {
	case err := <-reply:
		if err != nil {
			return toolsys.ErrorResult("transfer_to_agent: %v", err), nil
		}
	case <-ctx.Done():
		return toolsys.ErrorResult("transfer_to_agent: %v", context.Cause(ctx)), nil
	}
	return toolsys.Result{Content: fmt.Sprintf("Transferred to agent %q.", p.Agent), Metadata: map[string]any{"agent": p.Agent}}, nil
}

// transferCmd switches the session's agent during turn.
type transferCmd struct {
	turn   int
	name   string
	reason string
	reply  chan error
}

// onTransfer handles a transferCmd: the switch is journaled at once, and
// the turn's next model call is the new agent's.
func (a *sessionActor) onTransfer(m *transferCmd) {
	switch {
	case a.turn == nil || a.turn.index != m.turn:
		m.reply <- fmt.Errorf("turn %d is over", m.turn)
	case a.e.sub != nil:
		m.reply <- fmt.Errorf("a sub-agent cannot hand its task to another agent")
	case a.rt.agents[m.name] == nil:
		m.reply <- fmt.Errorf("%w %q; the agents are %s", ErrUnknownAgent, m.name, strings.Join(a.rt.agentNames(), ", "))
	default:
		a.applySwitch(m.name, m.reason)
		m.reply <- nil
	}
}
