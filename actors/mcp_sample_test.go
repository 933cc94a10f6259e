package actors_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// samplingServer has a tool that asks the client's model to complete
// "Say hi", and returns the completion or the failure.
func samplingServer(t *testing.T) *memServer {
	return newMemServerWith(t, &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}}, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "ask_model", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 50, SystemPrompt: "Be brief.",
					Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Say hi"}}}})
				if err != nil {
					return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
				}
				return &sdk.CallToolResult{Content: []sdk.Content{res.Content}}, nil
			})
	})
}

// TestMCP_Sampling answers a server's sampling request with the runtime's
// model once the approver allows it, and counts its usage; it is refused
// when the approver denies it, and by default (sampling off) the approver
// is never asked.
func TestMCP_Sampling(t *testing.T) {
	tests := []struct {
		name     string
		sampling bool
		allow    bool
		want     string
		asked    int32
	}{
		{"allowed", true, true, "hi from the model", 1},
		{"denied", true, false, "sampling refused: not now", 1},
		{"off by default", false, true, "client does not support CreateMessage", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := samplingServer(t).config("srv")
			cfg.Sampling = tc.sampling
			var asked atomic.Int32
			var reg *toolsys.Registry
			f := newFixture(t, textScript("hi from the model"), nil, func(c *actors.Config) {
				c.MCPServers = []mcp.ServerConfig{cfg}
				c.Approver = toolsys.ApproverFunc(func(_ context.Context, req toolsys.ApprovalRequest) (toolsys.Approval, error) {
					asked.Add(1)
					if req.Tool != "mcp__srv__sampling" || !strings.Contains(string(req.Args), "Say hi") {
						t.Errorf("approval request %+v", req)
					}
					return toolsys.Approval{Allow: tc.allow, Reason: "not now"}, nil
				})
				reg, _ = c.Tools.(*toolsys.Registry)
			})
			waitMCP(t, f.rt, "srv")
			before := f.rt.Usage().Usage
			res, err := reg.Call(t.Context(), "mcp__srv__ask_model", json.RawMessage(`{}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Content, tc.want) {
				t.Errorf("tool result %q, want it to contain %q", res.Content, tc.want)
			}
			if asked.Load() != tc.asked {
				t.Errorf("approver asked %d times, want %d", asked.Load(), tc.asked)
			}
			after := f.rt.Usage().Usage
			if grew := after.TotalTokens > before.TotalTokens; grew != (tc.allow && tc.sampling) {
				t.Errorf("usage %+v -> %+v: grew = %v, want %v", before, after, grew, tc.allow && tc.sampling)
			}
		})
	}
}
