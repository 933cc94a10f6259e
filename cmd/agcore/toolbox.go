package main

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// toolbox runs a conversation's tool calls through a registry: the calls of
// one reply run in parallel, confined to a workspace, and their results come
// back in call order. Every failure (unknown tool, bad arguments, a tool
// error or panic, a runtime fault) becomes an error result the model reads,
// so the conversation goes on.
type toolbox struct {
	reg       *toolsys.Registry
	workspace *toolsys.Workspace
	session   string
	log       zerolog.Logger
}

// definitions describes the tools to the model.
func (tb *toolbox) definitions() []messages.ToolDefinition { return tb.reg.Definitions() }

// runAll executes calls concurrently and returns their results in call
// order.
func (tb *toolbox) runAll(ctx context.Context, turn int, calls []messages.ToolCall) []toolsys.Result {
	results := make([]toolsys.Result, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { results[i] = tb.run(ctx, turn, c) })
	}
	wg.Wait()
	return results
}

// run executes one call.
func (tb *toolbox) run(ctx context.Context, turn int, call messages.ToolCall) toolsys.Result {
	log := tb.log.With().Str("tool", call.Name).Str("call_id", call.ID).Logger()
	args := json.RawMessage(call.Arguments)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	tc := &toolsys.Context{SessionID: tb.session, Turn: turn, CallID: call.ID, Workspace: tb.workspace, Logger: log}
	res, err := tb.reg.Call(ctx, call.Name, args, tc)
	if err != nil {
		log.Error().Err(err).Msg("tool call failed")
		return toolsys.ErrorResult("%v", err)
	}
	return res
}
