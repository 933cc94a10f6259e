package actors

// This file holds the Runtime's MCP surface: the status, resources and
// prompts of the configured MCP servers.

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys/mcp"
)

// MCPStatus reports the state of every configured MCP server, in
// configuration order.
func (rt *Runtime) MCPStatus() []MCPServerStatus {
	if rt.mcp == nil {
		return nil
	}
	out := make([]MCPServerStatus, 0, len(rt.mcp.servers))
	for _, srv := range rt.mcp.servers {
		srv.mu.Lock()
		st := srv.status
		s := MCPServerStatus{Name: srv.cfg.Name, State: st.State, Err: st.Err, Failures: st.Failures,
			Connects: st.Connects, Tools: st.Tools, PID: st.PID}
		if srv.stopErr != nil {
			s.State, s.Err, s.Tools, s.PID = mcp.StateFailed, srv.stopErr, 0, 0
		}
		srv.mu.Unlock()
		out = append(out, s)
	}
	return out
}

// MCPReady waits until the named server is connected and its tools are
// registered. It returns the reason when the runtime gave up on the server,
// ErrClosed after Shutdown, or ctx's error.
func (rt *Runtime) MCPReady(ctx context.Context, server string) error {
	srv, err := rt.mcpServer(server)
	if err != nil {
		return err
	}
	for {
		srv.mu.Lock()
		state, stopErr, closed, ch := srv.status.State, srv.stopErr, srv.closed, srv.changed
		srv.mu.Unlock()
		switch {
		case stopErr != nil:
			return fmt.Errorf("actors: mcp server %s: %w", server, stopErr)
		case closed:
			return ErrClosed
		case state == mcp.StateReady:
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("actors: waiting for mcp server %s (%s): %w", server, state, ctx.Err())
		}
	}
}

// MCPResources lists the resources of the named server.
func (rt *Runtime) MCPResources(ctx context.Context, server string) ([]*sdk.Resource, error) {
	conn, err := rt.mcpConn(server, "list resources")
	if err != nil {
		return nil, err
	}
	return conn.ListResources(ctx)
}

// ReadMCPResource reads the resource uri of the named server.
func (rt *Runtime) ReadMCPResource(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error) {
	conn, err := rt.mcpConn(server, "read resource "+uri)
	if err != nil {
		return nil, err
	}
	return conn.ReadResource(ctx, uri)
}

// MCPPrompts lists the prompts of the named server.
func (rt *Runtime) MCPPrompts(ctx context.Context, server string) ([]*sdk.Prompt, error) {
	conn, err := rt.mcpConn(server, "list prompts")
	if err != nil {
		return nil, err
	}
	return conn.ListPrompts(ctx)
}

// GetMCPPrompt renders the named prompt of the named server with args.
func (rt *Runtime) GetMCPPrompt(ctx context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	conn, err := rt.mcpConn(server, "get prompt "+name)
	if err != nil {
		return nil, err
	}
	return conn.GetPrompt(ctx, name, args)
}
