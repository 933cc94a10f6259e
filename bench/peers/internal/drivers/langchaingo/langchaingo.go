// Package langchaingo runs the workload on tmc/langchaingo's OpenAI
// functions agent (native tool calls) driven by an agents.Executor.
package langchaingo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"

	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
)

// Peer is langchaingo's OpenAI functions agent.
var Peer = harness.Peer{Name: "langchaingo", New: New}

type driver struct{ exec *agents.Executor }

// New returns the langchaingo driver.
func New(_ context.Context, env harness.Env) (harness.Driver, error) {
	llm, err := openai.New(
		openai.WithBaseURL(env.BaseURL),
		openai.WithHTTPClient(env.HTTPClient),
		openai.WithToken("unused"),
		openai.WithModel(workload.Model),
	)
	if err != nil {
		return nil, fmt.Errorf("langchaingo: %w", err)
	}
	agent := agents.NewOpenAIFunctionsAgent(llm, []tools.Tool{lookup{}},
		agents.NewOpenAIOption().WithSystemMessage(workload.SystemPrompt))
	return &driver{exec: agents.NewExecutor(agent, agents.WithMaxIterations(workload.MaxSteps))}, nil
}

func (d *driver) Turn(ctx context.Context) error {
	out, err := chains.Run(ctx, d.exec, workload.Prompt)
	if err != nil {
		return fmt.Errorf("langchaingo: %w", err)
	}
	return workload.CheckAnswer(out)
}

func (d *driver) Close() error { return nil }

// lookup is the workload's tool. langchaingo hands a tool the model's
// argument text as one string, so it decodes the JSON itself.
type lookup struct{}

func (lookup) Name() string        { return workload.ToolName }
func (lookup) Description() string { return workload.ToolDescription }

func (lookup) Call(_ context.Context, input string) (string, error) {
	var args workload.Args
	if err := json.Unmarshal([]byte(input), &args); err != nil {
		return "invalid arguments: " + err.Error(), nil
	}
	return workload.Lookup(args.Key), nil
}
