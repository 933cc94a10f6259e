// Package einotool holds what the two eino peers share: the chat model
// pointed at the mock and the workload's tool.
package einotool

import (
	"context"
	"fmt"

	einoopenai "github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
)

// Model returns eino-ext's OpenAI chat model sending to env's mock.
func Model(ctx context.Context, env harness.Env) (*einoopenai.ChatModel, error) {
	m, err := einoopenai.NewChatModel(ctx, &einoopenai.ChatModelConfig{
		BaseURL:    env.BaseURL,
		HTTPClient: env.HTTPClient,
		Model:      workload.Model,
	})
	if err != nil {
		return nil, fmt.Errorf("eino: chat model: %w", err)
	}
	return m, nil
}

// Lookup returns the workload's tool, its schema inferred from
// workload.Args.
func Lookup() (tool.InvokableTool, error) {
	t, err := utils.InferTool(workload.ToolName, workload.ToolDescription,
		func(_ context.Context, a workload.Args) (string, error) { return workload.Lookup(a.Key), nil })
	if err != nil {
		return nil, fmt.Errorf("eino: tool: %w", err)
	}
	return t, nil
}
