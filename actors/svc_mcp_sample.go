package actors

// This file answers the sampling requests of MCP servers that may make
// them (mcp.ServerConfig.Sampling): each is approved through
// Config.Approver, answered by the runtime's default model, and counted in
// the runtime's usage.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// mcpSampleApproval bounds the wait for the approval of a sampling
// request.
const mcpSampleApproval = time.Minute

// mcpSample returns the SampleFunc of server: the request is put to
// Config.Approver as a call of the pseudo-tool mcp__<server>__sampling
// (execute permission, the server's messages as arguments); once allowed,
// the default model answers and its usage is recorded.
func (rt *Runtime) mcpSample(server string) mcp.SampleFunc {
	return func(ctx context.Context, req mcp.SampleRequest) (mcp.SampleResult, error) {
		if rt.cfg.Approver == nil {
			return mcp.SampleResult{}, fmt.Errorf("%w: no approver is configured (Config.Approver)", mcp.ErrSamplingRefused)
		}
		shown := make([]map[string]string, len(req.Messages))
		for i, m := range req.Messages {
			shown[i] = map[string]string{"role": string(m.Role), "text": m.Text()}
		}
		args, err := json.Marshal(map[string]any{"messages": shown, "max_tokens": req.MaxTokens})
		if err != nil {
			return mcp.SampleResult{}, err
		}
		actx, cancel := context.WithTimeout(ctx, mcpSampleApproval)
		ap, err := rt.cfg.Approver.Approve(actx, toolsys.ApprovalRequest{
			Request: toolsys.Request{Tool: mcp.ToolName(server, "sampling"), Permission: toolsys.PermExecute, Args: args, Subject: server},
			Reason:  fmt.Sprintf("MCP server %s asks the model for a completion (sampling)", server),
			Timeout: mcpSampleApproval,
		})
		cancel()
		switch {
		case err != nil:
			return mcp.SampleResult{}, fmt.Errorf("%w: %w", mcp.ErrSamplingRefused, err)
		case !ap.Allow:
			return mcp.SampleResult{}, fmt.Errorf("%w: %s", mcp.ErrSamplingRefused, ap.Reason)
		}
		p, model, err := rt.providers.Resolve(rt.cfg.Model)
		if err != nil {
			return mcp.SampleResult{}, err
		}
		resp, err := p.Chat(ctx, messages.Request{Model: model, Messages: req.Messages, MaxTokens: req.MaxTokens,
			Temperature: req.Temperature, Stop: req.Stop})
		if err != nil {
			return mcp.SampleResult{}, fmt.Errorf("sampling for mcp server %s: %w", server, err)
		}
		name := resp.Model
		if name == "" {
			name = model
		}
		rt.tracker.Record(name, resp.Usage)
		stop := "endTurn"
		if resp.FinishReason == messages.FinishLength {
			stop = "maxTokens"
		}
		return mcp.SampleResult{Text: resp.Message.Text(), Model: name, StopReason: stop}, nil
	}
}
