package actors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/redact"
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

// reportTool reports one progress message, then waits for shown before it
// returns.
type reportTool struct {
	funcTool
	message string
	shown   chan struct{}
}

func (r *reportTool) Execute(ctx context.Context, _ json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	tc.ReportProgress(toolsys.Progress{Progress: 1, Message: r.message})
	select {
	case <-r.shown:
		return toolsys.Result{Content: "reported"}, nil
	case <-ctx.Done():
		return toolsys.Result{}, ctx.Err()
	}
}

// TestRuntime_ProgressIsRedacted masks a credential a tool's progress
// message quotes before the ToolProgress event reaches a stream.
func TestRuntime_ProgressIsRedacted(t *testing.T) {
	const key = "configured-key-0123456789"
	r := redact.New()
	r.Add(key, "")
	tool := &reportTool{funcTool: funcTool{name: "report", perm: toolsys.PermReadOnly}, message: "using " + key, shown: make(chan struct{})}
	script := toolScript("done", scripted.ToolCall{Name: "report", Arguments: `{}`})
	f := newFixture(t, script, []toolsys.Tool{tool}, func(c *actors.Config) { c.Redactor = r })
	var got []messages.ToolProgress
	for ev, err := range f.sess.Stream(t.Context(), messages.UserText("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := ev.(messages.ToolProgress); ok {
			got = append(got, p)
			close(tool.shown)
		}
	}
	if len(got) != 1 || strings.Contains(got[0].Message, key) || !strings.Contains(got[0].Message, redact.Mask) || got[0].Name != "report" {
		t.Errorf("ToolProgress events %+v, want one with the key masked", got)
	}
}

// floodTool reports n progress messages as fast as it can, then returns.
type floodTool struct {
	funcTool
	n int
}

func (f *floodTool) Execute(_ context.Context, _ json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	for i := 1; i <= f.n; i++ {
		tc.ReportProgress(toolsys.Progress{Progress: float64(i), Total: float64(f.n)})
	}
	return toolsys.Result{Content: "flooded"}, nil
}

// TestRuntime_ProgressFloodKeepsOrderAndTheLatest runs a tool that reports
// progress far faster than a stream can show it: the turn completes, the
// reports shown only grow, and the last one shown before ToolFinished is
// the tool's last report (the ones skipped under the flood are
// intermediate ones).
func TestRuntime_ProgressFloodKeepsOrderAndTheLatest(t *testing.T) {
	const n = 20_000
	tool := &floodTool{funcTool: funcTool{name: "flood", perm: toolsys.PermReadOnly}, n: n}
	f := newFixture(t, toolScript("done", scripted.ToolCall{Name: "flood", Arguments: `{}`}), []toolsys.Tool{tool}, nil)
	var shown []float64
	var finished bool
	for ev, err := range f.sess.Stream(t.Context(), messages.UserText("go")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case messages.ToolProgress:
			if finished {
				t.Fatalf("ToolProgress %v after ToolFinished", e.Progress)
			}
			shown = append(shown, e.Progress)
		case messages.ToolFinished:
			finished = true
		case messages.TurnEnded:
			if e.Outcome != messages.OutcomeCompleted {
				t.Fatalf("turn ended %s: %s", e.Outcome, e.Reason)
			}
		}
	}
	if len(shown) == 0 || shown[len(shown)-1] != n {
		t.Fatalf("%d reports shown, the last %v; want the last to be %d", len(shown), shown[len(shown)-1:], n)
	}
	for i := 1; i < len(shown); i++ {
		if shown[i] <= shown[i-1] {
			t.Fatalf("report %v shown after %v", shown[i], shown[i-1])
		}
	}
	t.Logf("%d of %d reports shown", len(shown), n)
}
