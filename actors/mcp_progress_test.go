package actors_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// TestMCP_ProgressOnTheTurnStream publishes a remote tool's progress
// notifications as ToolProgress events on the turn's stream, between the
// call's ToolStarted and ToolFinished.
func TestMCP_ProgressOnTheTurnStream(t *testing.T) {
	// The server ends the call once the stream has shown its last report,
	// so no notification can arrive after the reply.
	shown := make(chan struct{})
	m := newMemServer(t, func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "index"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			for i := 1; i <= 3; i++ {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: fmt.Sprint("file ", i)}); err != nil {
					return nil, nil, err
				}
			}
			select {
			case <-shown:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "indexed"}}}, nil, nil
		})
	})
	script := toolScript("done", scripted.ToolCall{ID: "c1", Name: "mcp__mem__index", Arguments: `{}`})
	f := newFixture(t, script, []toolsys.Tool{echoTool("local")}, func(c *actors.Config) {
		c.MCPServers = []mcp.ServerConfig{m.config("mem")}
	})
	waitMCP(t, f.rt, "mem")

	var order []string
	var got []messages.ToolProgress
	for ev, err := range f.sess.Stream(t.Context(), messages.UserText("index")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case messages.ToolStarted, messages.ToolFinished:
			order = append(order, ev.EventType())
		case messages.ToolProgress:
			order = append(order, ev.EventType())
			got = append(got, e)
			if len(got) == 3 {
				close(shown)
			}
		}
	}
	meta := messages.EventMeta{Session: f.sess.ID(), Turn: 0}
	want := []messages.ToolProgress{
		{EventMeta: meta, CallID: "c1", Name: "mcp__mem__index", Progress: 1, Total: 3, Message: "file 1"},
		{EventMeta: meta, CallID: "c1", Name: "mcp__mem__index", Progress: 2, Total: 3, Message: "file 2"},
		{EventMeta: meta, CallID: "c1", Name: "mcp__mem__index", Progress: 3, Total: 3, Message: "file 3"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToolProgress events (-want +got):\n%s", diff)
	}
	wantOrder := []string{"tool_started", "tool_progress", "tool_progress", "tool_progress", "tool_finished"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("tool events (-want +got):\n%s", diff)
	}
}
