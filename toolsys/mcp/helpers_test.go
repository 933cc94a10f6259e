package mcp_test

import (
	"context"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// inMemory serves an SDK server in process: every connection attempt gets
// a fresh pair of in-memory transports, and kill ends every live session
// as if the server had died.
type inMemory struct {
	server *sdk.Server

	mu       sync.Mutex
	sessions []*sdk.ServerSession
}

func newInMemory(t *testing.T, setup func(*sdk.Server)) *inMemory {
	t.Helper()
	return newInMemoryWith(t, nil, setup)
}

// newInMemoryWith is newInMemory with server options.
func newInMemoryWith(t *testing.T, opts *sdk.ServerOptions, setup func(*sdk.Server)) *inMemory {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "test-server", Version: "1"}, opts)
	setup(s)
	m := &inMemory{server: s}
	t.Cleanup(m.kill)
	return m
}

// config returns a ServerConfig named name that reaches m.
func (m *inMemory) config(name string) mcp.ServerConfig {
	return mcp.ServerConfig{Name: name, Transport: m.transport}
}

func (m *inMemory) transport(ctx context.Context) (sdk.Transport, error) {
	st, ct := sdk.NewInMemoryTransports()
	ss, err := m.server.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.sessions = append(m.sessions, ss)
	m.mu.Unlock()
	return ct, nil
}

// kill closes every server session.
func (m *inMemory) kill() {
	m.mu.Lock()
	ss := m.sessions
	m.sessions = nil
	m.mu.Unlock()
	for _, s := range ss {
		_ = s.Close()
	}
}

// connect opens a Client on cfg and closes it at the end of the test.
func connect(t *testing.T, cfg mcp.ServerConfig) *mcp.Client {
	t.Helper()
	c, err := mcp.Connect(t.Context(), cfg, mcp.Options{})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// findTool finds the tool called name.
func findTool(t *testing.T, tools []toolsys.Tool, name string) toolsys.Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.Name() == name {
			return tool
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// runAllRegistry returns a registry whose calls all run without an approver:
// these tests exercise the connection, not the permission pipeline.
func runAllRegistry(t *testing.T) *toolsys.Registry {
	t.Helper()
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeBypass})
	if err != nil {
		t.Fatal(err)
	}
	return toolsys.NewRegistry(toolsys.Config{Permissions: perms})
}
