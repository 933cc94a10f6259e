package main

// This file holds what serve does for MCP servers behind OAuth that have
// no stored token: the authorization waits for a user, listed by
// GET /v1/mcp/authorizations and the console, while the server serves.

import (
	"context"
	"errors"
	"io"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/toolsys/mcp"
)

// errAwaitingAuthorization says that an MCP server waits for a user to
// authorize agcore, and where the URL to open is.
var errAwaitingAuthorization = errors.New("waits for a user to authorize agcore: open the URL listed by " +
	"GET /v1/mcp/authorizations (or the console's banner) in a browser on this machine")

// allowAuthorizationTime lets the connection attempts of the OAuth servers
// among servers (authorization-code grant, no init_timeout set) last as
// long as pa waits for a user, since the authorization happens within
// the attempt.
func allowAuthorizationTime(servers []mcp.ServerConfig, pa *mcp.PendingAuthorizer) {
	wait := pa.Timeout
	if wait <= 0 {
		wait = mcp.DefaultAuthorizationTimeout
	}
	for i := range servers {
		sc := &servers[i]
		if sc.OAuth == nil || sc.OAuth.Grant == mcp.GrantClientCredentials || sc.InitTimeout != 0 {
			continue
		}
		sc.InitTimeout = wait
	}
}

// waitServeMCP waits for the MCP servers of cfg as waitRuntimeMCP does,
// except that a server that is not required stops being waited for once
// its authorization is pending in pa: the user authorizes it through the
// API or the console, which are served only after this wait.
func waitServeMCP(ctx context.Context, rt *actors.Runtime, cfg *config.Config, pa *mcp.PendingAuthorizer, warn io.Writer) error {
	return waitMCP(ctx, cfg.MCPServers, func(i int) mcpWaiter {
		s := cfg.MCPServers[i]
		h := rt.MCP(s.Name)
		ready := h.Ready
		if !s.Required {
			ready = func(ctx context.Context) error { return readyOrPending(ctx, h.Ready, pa, s.Name) }
		}
		return mcpWaiter{ready: ready, status: func() (string, error) {
			st := h.Status()
			return st.State.String(), st.Err
		}}
	}, warn)
}

// readyOrPending returns what ready returns, or errAwaitingAuthorization
// as soon as pa lists an authorization of server.
func readyOrPending(ctx context.Context, ready func(context.Context) error, pa *mcp.PendingAuthorizer, server string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ready(ctx) }()
	for {
		changed := pa.Changed()
		for _, p := range pa.Pending() {
			if p.Server == server {
				return errAwaitingAuthorization
			}
		}
		select {
		case err := <-done:
			return err
		case <-changed:
		}
	}
}
