package providers

// This file holds ChatOnly, the provider of an endpoint that does not
// stream.

import (
	"context"
	"io"

	"github.com/agcore/agcore/messages"
)

// ChatOnly returns a Provider whose Stream asks p for the complete reply
// with Chat and delivers it as one chunk: its whole text, its tool calls,
// its finish reason and its usage. It is for endpoints that cannot stream
// (or cannot stream tool calls), so that callers that stream work with them
// unchanged. When p is a Retrier, so is the result, and its SingleAttempt
// is ChatOnly of p's.
func ChatOnly(p Provider) Provider {
	if r, ok := p.(Retrier); ok {
		return &chatOnlyRetrier{chatOnly{p: p}, r}
	}
	return &chatOnly{p: p}
}

type chatOnly struct{ p Provider }

// Chat calls the wrapped provider's Chat.
func (c *chatOnly) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	return c.p.Chat(ctx, req)
}

// Stream calls Chat and returns its reply as a stream of one chunk.
func (c *chatOnly) Stream(ctx context.Context, req messages.Request) (Stream, error) {
	resp, err := c.p.Chat(ctx, req)
	if err != nil {
		return nil, err
	}
	return &replayStream{ctx: ctx, resp: resp}, nil
}

type chatOnlyRetrier struct {
	chatOnly
	r Retrier
}

// SingleAttempt implements Retrier.
func (c *chatOnlyRetrier) SingleAttempt() Provider { return ChatOnly(c.r.SingleAttempt()) }

// replayStream is a complete response delivered as one chunk. Like any
// stream, it ends with its context's error once the context is done.
type replayStream struct {
	ctx  context.Context
	resp *messages.Response
	sent bool
}

// Recv returns the whole reply, then io.EOF (or the context's error).
func (s *replayStream) Recv() (Chunk, error) {
	if err := s.ctx.Err(); err != nil {
		return Chunk{}, err
	}
	if s.sent {
		return Chunk{}, io.EOF
	}
	s.sent = true
	r := s.resp
	usage := r.Usage
	c := Chunk{Text: r.Message.Text(), FinishReason: r.FinishReason, Usage: &usage, ID: r.ID, Model: r.Model}
	for i, tc := range r.Message.ToolCalls {
		c.ToolCalls = append(c.ToolCalls, ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	return c, nil
}

// Response returns the reply once it was received, and an empty reply
// before.
func (s *replayStream) Response() *messages.Response {
	if !s.sent {
		return &messages.Response{Message: messages.Message{Role: messages.RoleAssistant}}
	}
	return s.resp
}

// Close does nothing: the reply is already complete.
func (s *replayStream) Close() error { return nil }
