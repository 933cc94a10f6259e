package actors

// This file holds MCPServer, the Runtime's handle on one configured MCP
// server: its status, and its resources and prompts.

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys/mcp"
)

// ErrUnknownMCPServer is returned by the MCPServer handle of a server name
// that is not in Config.MCPServers.
var ErrUnknownMCPServer = errors.New("actors: unknown MCP server")

// MCPServerStatus is a snapshot of one configured MCP server.
type MCPServerStatus struct {
	// Name is the server's configured name.
	Name string
	// State is where the connection stands. It is mcp.StateFailed once the
	// runtime gave up on the server for good.
	State mcp.State
	// Err is the last failure: the reason the runtime gave up in
	// StateFailed, the failure being recovered from in StateBackoff.
	Err error
	// Failures counts consecutive failed connection attempts.
	Failures int
	// Connects counts successful connections since the runtime started.
	Connects int
	// Tools is how many of the server's tools are registered now.
	Tools int
	// PID is the server process of a stdio server, 0 otherwise.
	PID int
}

// MCPServer is a handle on one MCP server of Config.MCPServers, whose
// connection actor (mcp/<name>) the runtime keeps. It is cheap and safe for
// concurrent use. The handle of a name that is not configured reports
// ErrUnknownMCPServer.
type MCPServer struct {
	name string
	srv  *mcpServer // nil for a name that is not configured
}

// MCP returns the handle on the MCP server configured as name.
func (rt *Runtime) MCP(name string) *MCPServer {
	m := &MCPServer{name: name}
	if rt.mcp != nil {
		m.srv = rt.mcp.byName[name]
	}
	return m
}

// Status reports where the server's connection stands. A name that is not
// configured reports mcp.StateFailed with ErrUnknownMCPServer.
func (m *MCPServer) Status() MCPServerStatus {
	if m.srv == nil {
		return MCPServerStatus{Name: m.name, State: mcp.StateFailed, Err: fmt.Errorf("%w %q", ErrUnknownMCPServer, m.name)}
	}
	srv := m.srv
	srv.mu.Lock()
	defer srv.mu.Unlock()
	st := srv.status
	s := MCPServerStatus{Name: m.name, State: st.State, Err: st.Err, Failures: st.Failures,
		Connects: st.Connects, Tools: st.Tools, PID: st.PID}
	if srv.stopErr != nil {
		s.State, s.Err, s.Tools, s.PID = mcp.StateFailed, srv.stopErr, 0, 0
	}
	return s
}

// Ready waits until the server is connected and its tools are registered.
// It returns the reason when the runtime gave up on the server, ErrClosed
// after Shutdown, or ctx's error.
func (m *MCPServer) Ready(ctx context.Context) error {
	if m.srv == nil {
		return fmt.Errorf("%w %q", ErrUnknownMCPServer, m.name)
	}
	srv := m.srv
	for {
		srv.mu.Lock()
		state, stopErr, closed, ch := srv.status.State, srv.stopErr, srv.closed, srv.changed
		srv.mu.Unlock()
		switch {
		case stopErr != nil:
			return fmt.Errorf("actors: mcp server %s: %w", m.name, stopErr)
		case closed:
			return ErrClosed
		case state == mcp.StateReady:
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("actors: waiting for mcp server %s (%s): %w", m.name, state, ctx.Err())
		}
	}
}

// Resources lists the server's resources.
func (m *MCPServer) Resources(ctx context.Context) ([]*sdk.Resource, error) {
	conn, err := m.conn("list resources")
	if err != nil {
		return nil, err
	}
	return conn.ListResources(ctx)
}

// ReadResource reads the server's resource uri.
func (m *MCPServer) ReadResource(ctx context.Context, uri string) (*sdk.ReadResourceResult, error) {
	conn, err := m.conn("read resource " + uri)
	if err != nil {
		return nil, err
	}
	return conn.ReadResource(ctx, uri)
}

// Prompts lists the server's prompts.
func (m *MCPServer) Prompts(ctx context.Context) ([]*sdk.Prompt, error) {
	conn, err := m.conn("list prompts")
	if err != nil {
		return nil, err
	}
	return conn.ListPrompts(ctx)
}

// GetPrompt renders the server's prompt name with args.
func (m *MCPServer) GetPrompt(ctx context.Context, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	conn, err := m.conn("get prompt " + name)
	if err != nil {
		return nil, err
	}
	return conn.GetPrompt(ctx, name, args)
}

// conn returns the server's live connection, or why there is none. Errors
// about the server wrap mcp.ErrServerUnavailable.
func (m *MCPServer) conn(op string) (*mcp.Conn, error) {
	if m.srv == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownMCPServer, m.name)
	}
	srv := m.srv
	srv.mu.Lock()
	conn, stopErr, closed := srv.conn, srv.stopErr, srv.closed
	srv.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case stopErr != nil:
		return nil, &mcp.ServerError{Server: m.name, Op: op, Err: fmt.Errorf("%w: stopped: %w", mcp.ErrServerUnavailable, stopErr)}
	case conn == nil:
		return nil, &mcp.ServerError{Server: m.name, Op: op, Err: fmt.Errorf("%w: not started yet", mcp.ErrServerUnavailable)}
	}
	return conn, nil
}
