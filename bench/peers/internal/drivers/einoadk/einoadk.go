// Package einoadk runs the workload on cloudwego/eino's ADK, the API its
// README recommends: a ChatModelAgent run by a Runner, which builds its
// chain on every run and reports the turn as a sequence of events.
//
// In eino v0.7.36 concurrent runs of one ChatModelAgent race on the chain
// it shares between runs (fixed upstream by cloudwego/eino pull request
// 775), so the driver keeps a free list of runners and gives each
// concurrent turn its own: at most one runner per goroutine is built, all
// during the warm-up.
package einoadk

import (
	"context"
	"fmt"

	einoopenai "github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/agcore/agcore/bench/peers/internal/drivers/einotool"
	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
)

// Peer is eino's ADK ChatModelAgent.
var Peer = harness.Peer{Name: "eino-adk", New: New}

// maxIdle bounds the runners kept between turns.
const maxIdle = 256

type driver struct {
	model  *einoopenai.ChatModel
	lookup tool.BaseTool
	idle   chan *adk.Runner
}

// New returns the eino ADK driver.
func New(ctx context.Context, env harness.Env) (harness.Driver, error) {
	model, err := einotool.Model(ctx, env)
	if err != nil {
		return nil, err
	}
	lookup, err := einotool.Lookup()
	if err != nil {
		return nil, err
	}
	d := &driver{model: model, lookup: lookup, idle: make(chan *adk.Runner, maxIdle)}
	r, err := d.newRunner(ctx)
	if err != nil {
		return nil, err
	}
	d.idle <- r
	return d, nil
}

// newRunner builds an agent and its runner.
func (d *driver) newRunner(ctx context.Context) (*adk.Runner, error) {
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:          "assistant",
		Description:   "Answers questions with the lookup tool.",
		Instruction:   workload.SystemPrompt,
		Model:         d.model,
		ToolsConfig:   adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{d.lookup}}},
		MaxIterations: workload.MaxSteps,
	})
	if err != nil {
		return nil, fmt.Errorf("eino-adk: %w", err)
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}), nil
}

func (d *driver) Turn(ctx context.Context) error {
	var r *adk.Runner
	select {
	case r = <-d.idle:
	default:
		var err error
		if r, err = d.newRunner(ctx); err != nil {
			return err
		}
	}
	err := d.turn(ctx, r)
	select {
	case d.idle <- r:
	default:
	}
	return err
}

// turn runs one turn on r, which no other goroutine is using.
func (d *driver) turn(ctx context.Context, r *adk.Runner) error {
	events := r.Run(ctx, []adk.Message{schema.UserMessage(workload.Prompt)})
	var answer *schema.Message
	for {
		ev, ok := events.Next()
		if !ok {
			break
		}
		if ev.Err != nil {
			return fmt.Errorf("eino-adk: %w", ev.Err)
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil {
			continue
		}
		msg, err := ev.Output.MessageOutput.GetMessage()
		if err != nil {
			return fmt.Errorf("eino-adk: %w", err)
		}
		if msg.Role == schema.Assistant && len(msg.ToolCalls) == 0 {
			answer = msg
		}
	}
	if answer == nil {
		return fmt.Errorf("eino-adk: %w", workload.ErrTooManySteps)
	}
	return workload.CheckAnswer(answer.Content)
}

func (d *driver) Close() error { return nil }
