// Package agcoreloop runs the workload on agcore's building blocks without
// the actor runtime: the providers/openai provider and a toolsys.Registry
// holding a typed tool (schema reflected from its parameter struct,
// arguments validated, panics recovered, output capped), in a plain loop.
package agcoreloop

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/openai"
	"github.com/agcore/agcore/toolsys"
)

// Peer is agcore's provider and tool registry in a loop.
var Peer = harness.Peer{Name: "agcore-loop", New: New}

type driver struct {
	model *openai.Provider
	tools *toolsys.Registry
	defs  []messages.ToolDefinition
}

// New returns the agcore-loop driver.
func New(_ context.Context, env harness.Env) (harness.Driver, error) {
	model, err := openai.New(openai.Options{BaseURL: env.BaseURL, HTTPClient: env.HTTPClient, Model: workload.Model})
	if err != nil {
		return nil, fmt.Errorf("agcore-loop: %w", err)
	}
	reg, err := Registry()
	if err != nil {
		return nil, err
	}
	return &driver{model: model, tools: reg, defs: reg.Definitions()}, nil
}

// Registry returns a registry holding the workload's tool.
func Registry() (*toolsys.Registry, error) {
	reg := toolsys.NewRegistry(toolsys.Config{})
	if err := toolsys.RegisterTyped[workload.Args](reg, Lookup{}); err != nil {
		return nil, fmt.Errorf("agcore-loop: %w", err)
	}
	return reg, nil
}

func (d *driver) Turn(ctx context.Context) error {
	req := messages.Request{
		Messages: []messages.Message{messages.SystemText(workload.SystemPrompt), messages.UserText(workload.Prompt)},
		Tools:    d.defs,
	}
	for range workload.MaxSteps {
		resp, err := d.model.Chat(ctx, req)
		if err != nil {
			return fmt.Errorf("agcore-loop: chat: %w", err)
		}
		if len(resp.Message.ToolCalls) == 0 {
			return workload.CheckAnswer(resp.Message.Text())
		}
		req.Messages = append(req.Messages, resp.Message)
		for _, call := range resp.Message.ToolCalls {
			res, err := d.tools.Call(ctx, call.Name, json.RawMessage(call.Arguments), &toolsys.Context{CallID: call.ID})
			if err != nil {
				return fmt.Errorf("agcore-loop: %w", err)
			}
			req.Messages = append(req.Messages, messages.ToolResultMessage(call.ID, res.Content))
		}
	}
	return workload.ErrTooManySteps
}

func (d *driver) Close() error { return nil }

// Lookup is the workload's tool as a toolsys.Typed.
type Lookup struct{}

// Name implements toolsys.Typed.
func (Lookup) Name() string { return workload.ToolName }

// Description implements toolsys.Typed.
func (Lookup) Description() string { return workload.ToolDescription }

// Permission implements toolsys.Typed: the tool only reads.
func (Lookup) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams implements toolsys.Typed: no parameter takes secrets.
func (Lookup) SecretParams() []string { return nil }

// Execute implements toolsys.Typed.
func (Lookup) Execute(_ context.Context, p workload.Args, _ *toolsys.Context) (toolsys.Result, error) {
	return toolsys.Result{Content: workload.Lookup(p.Key)}, nil
}
