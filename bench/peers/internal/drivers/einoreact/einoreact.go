// Package einoreact runs the workload on cloudwego/eino's ReAct agent
// (flow/agent/react), whose graph is compiled once when the agent is
// built.
package einoreact

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	"github.com/agcore/agcore/bench/peers/internal/drivers/einotool"
	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
)

// Peer is eino's ReAct agent.
var Peer = harness.Peer{Name: "eino-react", New: New}

type driver struct{ agent *react.Agent }

// New returns the eino ReAct driver.
func New(ctx context.Context, env harness.Env) (harness.Driver, error) {
	model, err := einotool.Model(ctx, env)
	if err != nil {
		return nil, err
	}
	lookup, err := einotool.Lookup()
	if err != nil {
		return nil, err
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: model,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: []tool.BaseTool{lookup}},
		MaxStep:          2*workload.MaxSteps + 1,
	})
	if err != nil {
		return nil, fmt.Errorf("eino-react: %w", err)
	}
	return &driver{agent: agent}, nil
}

func (d *driver) Turn(ctx context.Context) error {
	msg, err := d.agent.Generate(ctx, []*schema.Message{
		schema.SystemMessage(workload.SystemPrompt),
		schema.UserMessage(workload.Prompt),
	})
	if err != nil {
		return fmt.Errorf("eino-react: %w", err)
	}
	return workload.CheckAnswer(msg.Content)
}

func (d *driver) Close() error { return nil }
