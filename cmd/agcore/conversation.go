package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// errMaxSteps is returned when the model is still calling tools after the
// allowed number of model calls.
var errMaxSteps = errors.New("the model did not finish within the allowed model calls")

// conversation drives a chat with tools: it streams each reply to a printer,
// runs the tool calls the reply asks for, sends their results back in call
// order, and repeats until the model answers without calling a tool.
type conversation struct {
	provider providers.Provider
	// model is the model requested; empty means the provider's default.
	model string
	tools *toolbox
	out   *printer
	usage *providers.Tracker
	// maxSteps caps the model calls of one run.
	maxSteps int
	log      zerolog.Logger
}

// run continues the conversation msgs until the model stops, and returns
// the whole history, the model's replies and the tool results included.
func (c *conversation) run(ctx context.Context, msgs []messages.Message) ([]messages.Message, error) {
	for step := range c.maxSteps {
		resp, err := c.stream(ctx, step, msgs)
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, resp.Message)
		calls := resp.Message.ToolCalls
		if len(calls) == 0 {
			c.out.endText()
			if resp.FinishReason == messages.FinishLength {
				c.out.note("(the reply was cut at the token limit)")
			}
			return msgs, nil
		}
		for _, call := range calls {
			c.out.toolCall(call)
		}
		results := c.tools.runAll(ctx, step, calls)
		for i, call := range calls {
			c.out.toolResult(call, results[i])
			msgs = append(msgs, messages.ToolResultMessage(call.ID, results[i].Content))
		}
		if err := ctx.Err(); err != nil {
			return msgs, err
		}
	}
	return msgs, fmt.Errorf("%w (%d)", errMaxSteps, c.maxSteps)
}

// stream makes one streamed model call, printing the text as it arrives, and
// returns the assembled reply.
func (c *conversation) stream(ctx context.Context, step int, msgs []messages.Message) (*messages.Response, error) {
	req := messages.Request{Model: c.model, Messages: msgs, Tools: c.tools.definitions()}
	c.log.Debug().Int("step", step).Int("messages", len(msgs)).Msg("model call")
	s, err := c.provider.Stream(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("model call %d: %w", step+1, err)
	}
	defer s.Close()
	for chunk, err := range providers.Chunks(s) {
		if err != nil {
			c.out.endText()
			return nil, fmt.Errorf("model call %d: %w", step+1, err)
		}
		c.out.text(chunk.Text)
	}
	resp := s.Response()
	model := resp.Model
	if model == "" {
		model = c.model
	}
	c.usage.Record(model, resp.Usage)
	c.log.Debug().Int("step", step).Str("finish_reason", string(resp.FinishReason)).
		Int("tool_calls", len(resp.Message.ToolCalls)).Int64("total_tokens", resp.Usage.TotalTokens).Msg("model replied")
	return resp, nil
}
