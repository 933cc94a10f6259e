// Package bare is the baseline of the comparison: a hand-written loop over
// github.com/sashabaranov/go-openai that sends the chat requests and runs
// the tool itself, with nothing in between. Peer asks for whole replies;
// StreamPeer streams them (server-sent events), as agcore's runtime does,
// and is the baseline that runtime is compared with.
package bare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
)

// Peer is the bare go-openai loop.
var Peer = harness.Peer{Name: "bare", New: New}

// StreamPeer is the bare go-openai loop streaming every reply.
var StreamPeer = harness.Peer{Name: "bare-stream", New: NewStream}

type driver struct {
	client *openai.Client
	tools  []openai.Tool
	stream bool
}

// NewStream returns the bare driver that streams replies.
func NewStream(ctx context.Context, env harness.Env) (harness.Driver, error) {
	d, err := newDriver(env)
	d.stream = true
	return d, err
}

// New returns the bare driver.
func New(_ context.Context, env harness.Env) (harness.Driver, error) {
	return newDriver(env)
}

func newDriver(env harness.Env) (*driver, error) {
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = env.BaseURL
	cfg.HTTPClient = env.HTTPClient
	return &driver{
		client: openai.NewClientWithConfig(cfg),
		tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name:        workload.ToolName,
			Description: workload.ToolDescription,
			Parameters:  json.RawMessage(workload.ToolSchema),
		}}},
	}, nil
}

func (d *driver) Turn(ctx context.Context) error {
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: workload.SystemPrompt},
		{Role: openai.ChatMessageRoleUser, Content: workload.Prompt},
	}
	for range workload.MaxSteps {
		req := openai.ChatCompletionRequest{Model: workload.Model, Messages: msgs, Tools: d.tools}
		chat := d.chat
		if d.stream {
			chat = d.chatStream
		}
		msg, err := chat(ctx, req)
		if err != nil {
			return err
		}
		if len(msg.ToolCalls) == 0 {
			return workload.CheckAnswer(msg.Content)
		}
		msgs = append(msgs, msg)
		for _, call := range msg.ToolCalls {
			msgs = append(msgs, openai.ChatCompletionMessage{
				Role:       openai.ChatMessageRoleTool,
				ToolCallID: call.ID,
				Content:    runTool(call.Function.Name, call.Function.Arguments),
			})
		}
	}
	return workload.ErrTooManySteps
}

// chat asks for a whole reply.
func (d *driver) chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionMessage, error) {
	resp, err := d.client.CreateChatCompletion(ctx, req)
	if err != nil {
		return openai.ChatCompletionMessage{}, fmt.Errorf("bare: chat: %w", err)
	}
	if len(resp.Choices) == 0 {
		return openai.ChatCompletionMessage{}, errors.New("bare: a reply without choices")
	}
	return resp.Choices[0].Message, nil
}

// chatStream streams a reply and joins its text and tool-call fragments.
func (d *driver) chatStream(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionMessage, error) {
	req.Stream = true
	s, err := d.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return openai.ChatCompletionMessage{}, fmt.Errorf("bare: stream: %w", err)
	}
	defer s.Close()
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	var text strings.Builder
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return openai.ChatCompletionMessage{}, fmt.Errorf("bare: stream: %w", err)
		}
		for _, c := range chunk.Choices {
			text.WriteString(c.Delta.Content)
			for _, tc := range c.Delta.ToolCalls {
				i := 0
				if tc.Index != nil {
					i = *tc.Index
				}
				for len(msg.ToolCalls) <= i {
					msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{Type: openai.ToolTypeFunction})
				}
				call := &msg.ToolCalls[i]
				if tc.ID != "" {
					call.ID = tc.ID
				}
				if tc.Function.Name != "" {
					call.Function.Name = tc.Function.Name
				}
				call.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	msg.Content = text.String()
	return msg, nil
}

// runTool runs a call the way a hand-written loop does: decode the
// arguments, look the key up, and report a problem as the result text.
func runTool(name, arguments string) string {
	if name != workload.ToolName {
		return fmt.Sprintf("unknown tool %q", name)
	}
	var args workload.Args
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return "invalid arguments: " + err.Error()
	}
	return workload.Lookup(args.Key)
}

func (d *driver) Close() error { return nil }
