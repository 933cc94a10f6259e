package mcp_test

import (
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

func TestConn_BindRegistersToolsWithSourceMCP(t *testing.T) {
	var calls atomic.Int64
	m := newInMemory(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "echo", InputSchema: echoSchema}, echoHandler(&calls))
	})
	conn, err := mcp.NewConn(m.config("mem"), mcp.ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reg := runAllRegistry(t)
	conn.Bind(reg)
	conn.Start(t.Context())
	defer conn.Close()
	if err := conn.Ready(t.Context()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	info, ok := reg.Info("mcp__mem__echo")
	if !ok || info.Source != toolsys.SourceMCP {
		t.Errorf("Info(mcp__mem__echo) = %+v (found %v), want source %q", info, ok, toolsys.SourceMCP)
	}
	if got := len(reg.ListBySource(toolsys.SourceMCP)); got != 1 {
		t.Errorf("ListBySource(mcp) has %d tools, want 1", got)
	}
}
