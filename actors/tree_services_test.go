package actors_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys/mcp"
)

// TestTree_Services: an MCP server the runtime gave up on shows as
// mcp/<name>, failed, with its reason; a runtime with schedules lists the
// scheduler, which answers through its mailbox.
func TestTree_Services(t *testing.T) {
	cfg := mcp.ServerConfig{Name: "down", Transport: func(context.Context) (sdk.Transport, error) {
		return nil, errors.New("connection refused by test")
	}}
	prov := scripted.MustNew(textScript("x"), scripted.Options{})
	rt, err := actors.NewInMemory(actors.Config{Provider: prov, MCPServers: []mcp.ServerConfig{cfg}, Clock: &recordingClock{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	defer rt.Shutdown(context.Background())
	if err := rt.MCP("down").Ready(ctx); !errors.Is(err, mcp.ErrGaveUp) {
		t.Fatalf("Ready = %v, want ErrGaveUp", err)
	}
	tree, err := rt.Tree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var down *actors.ServiceNode
	for i, s := range tree.Services {
		if s.Name == "mcp/down" {
			down = &tree.Services[i]
		}
	}
	if down == nil || down.Kind != actors.ServiceMCP || down.State != "failed" || !strings.Contains(down.Error, "connection refused by test") {
		t.Fatalf("services = %+v, want mcp/down failed with its reason", tree.Services)
	}

	e := newSchedEnv(t, textScript("ran"), nil, nil, nil)
	tree, err = e.rt.Tree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := tree.Services[len(tree.Services)-1]
	if last.Kind != actors.ServiceScheduler || last.Name != "scheduler" || last.State != "running" || last.InFlight != 0 {
		t.Fatalf("services = %+v, want the scheduler last, idle", tree.Services)
	}
}
