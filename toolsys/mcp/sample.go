package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/messages"
)

// ErrSamplingRefused is wrapped by the error a SampleFunc returns when the
// request was not approved; the server receives it as the request's error.
var ErrSamplingRefused = errors.New("sampling refused")

// SampleRequest is a server's request for a model completion
// (sampling/createMessage), in agcore's chat model.
type SampleRequest struct {
	// Server is the server's configured name.
	Server string
	// Messages are the conversation to complete, the server's system
	// prompt first when it gave one. Only text is carried.
	Messages []messages.Message
	// MaxTokens bounds the completion; the server must give it.
	MaxTokens int
	// Temperature is the server's, nil when it gave none.
	Temperature *float64
	// Stop are the server's stop sequences.
	Stop []string
	// ModelHints are the model names the server would like, in order of
	// preference; a SampleFunc may ignore them.
	ModelHints []string
	// Attribution says which session and tool call the request belongs
	// to, or, when that cannot be told, which sessions it may.
	Attribution
}

// SampleResult is the completion a SampleFunc returns.
type SampleResult struct {
	// Text is the model's answer.
	Text string
	// Model is the model that answered.
	Model string
	// StopReason is "endTurn", "stopSequence" or "maxTokens".
	StopReason string
}

// SampleFunc answers a server's sampling request: it gets it approved and
// asks a model. It is called from the connection's goroutines, possibly
// concurrently.
type SampleFunc func(ctx context.Context, req SampleRequest) (SampleResult, error)

// sample answers sampling/createMessage through cfg.Sample.
func (c *Client) sample(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	p := req.Params
	sr := SampleRequest{Server: c.cfg.Name, MaxTokens: int(p.MaxTokens), Stop: p.StopSequences, Attribution: c.attribute(p.Meta)}
	if p.Temperature != 0 {
		t := p.Temperature
		sr.Temperature = &t
	}
	if p.ModelPreferences != nil {
		for _, h := range p.ModelPreferences.Hints {
			if h != nil && h.Name != "" {
				sr.ModelHints = append(sr.ModelHints, h.Name)
			}
		}
	}
	if p.SystemPrompt != "" {
		sr.Messages = append(sr.Messages, messages.SystemText(p.SystemPrompt))
	}
	for i, m := range p.Messages {
		tc, ok := m.Content.(*sdk.TextContent)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("messages[%d]: only text content can be sampled, got %T", i, m.Content)}
		}
		msg := messages.UserText(tc.Text)
		if m.Role == "assistant" {
			msg.Role = messages.RoleAssistant
		}
		sr.Messages = append(sr.Messages, msg)
	}
	c.log.Info().Int("messages", len(p.Messages)).Int64("max_tokens", p.MaxTokens).Str("session", sr.Session).
		Str("call_id", sr.CallID).Bool("exact", sr.Exact).Msg("mcp: the server asks for a model completion")
	res, err := c.cfg.Sample(ctx, sr)
	if err != nil {
		c.log.Warn().Err(err).Msg("mcp: the server's sampling request was not answered")
		return nil, fmt.Errorf("mcp server %s: sampling: %w", c.cfg.Name, err)
	}
	stop := res.StopReason
	if stop == "" {
		stop = "endTurn"
	}
	return &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: res.Text}, Model: res.Model, Role: "assistant", StopReason: stop}, nil
}
