package main

// This file holds the start-up of the configured MCP servers: run, chat and
// serve wait for them before the first turn, and tools list connects to
// them, each server for at most its startup_timeout.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// mcpStartError says that an MCP server was not ready within its
// startup_timeout, and why.
type mcpStartError struct {
	Server  string
	Timeout time.Duration
	Err     error
}

func (e *mcpStartError) Error() string {
	if errors.Is(e.Err, errAwaitingAuthorization) {
		return fmt.Sprintf("mcp server %s %v", e.Server, e.Err)
	}
	return fmt.Sprintf("mcp server %s is not ready after %v: %v", e.Server, e.Timeout, e.Err)
}

func (e *mcpStartError) Unwrap() error { return e.Err }

// mcpWaiter waits for one MCP server: ready returns nil once it is
// connected with its tools registered, or why not; status explains a
// server still trying when ctx ends.
type mcpWaiter struct {
	ready  func(ctx context.Context) error
	status func() (state string, err error)
}

// waitMCP waits, in parallel, for every server of servers through wait
// (one waiter per server, in order), each for its StartupTimeout. A server
// that is not ready in time is named on warn, with the reason, and left
// out until it connects; a Required one is an error instead, naming the
// server and the key. It returns once every server is ready or has had its
// time.
func waitMCP(ctx context.Context, servers []config.MCPServer, wait func(i int) mcpWaiter, warn io.Writer) error {
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		w := wait(i)
		wg.Go(func() {
			wctx, cancel := context.WithTimeout(ctx, startupTimeout(s))
			defer cancel()
			err := w.ready(wctx)
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				errs[i] = ctx.Err()
				return
			}
			if errors.Is(err, context.DeadlineExceeded) {
				// Still trying: say where it stands and its last failure.
				state, last := w.status()
				err = fmt.Errorf("still in state %s", state)
				if last != nil {
					err = fmt.Errorf("in state %s after %w", state, last)
				}
			}
			errs[i] = &mcpStartError{Server: s.Name, Timeout: startupTimeout(s), Err: err}
		})
	}
	wg.Wait()
	var fatal []error
	for i, err := range errs {
		_, notReady := errors.AsType[*mcpStartError](err)
		switch {
		case err == nil:
		case !notReady:
			return err
		case servers[i].Required:
			fatal = append(fatal, fmt.Errorf("%w (mcp_servers[%d].required is set; fix the server, raise its startup_timeout, or unset required to go on without it)",
				err, i))
		default:
			fmt.Fprintf(warn, "agcore: warning: %v; its tools are left out until it connects\n", err)
		}
	}
	return errors.Join(fatal...)
}

// startupTimeout returns s's startup timeout, DefaultMCPStartupTimeout when
// it sets none.
func startupTimeout(s config.MCPServer) time.Duration {
	if s.StartupTimeout <= 0 {
		return config.DefaultMCPStartupTimeout
	}
	return s.StartupTimeout
}

// waitRuntimeMCP waits for the MCP servers of cfg that rt connects to (see
// waitMCP).
func waitRuntimeMCP(ctx context.Context, rt *actors.Runtime, cfg *config.Config, warn io.Writer) error {
	return waitMCP(ctx, cfg.MCPServers, func(i int) mcpWaiter {
		h := rt.MCP(cfg.MCPServers[i].Name)
		return mcpWaiter{ready: h.Ready, status: func() (string, error) {
			st := h.Status()
			return st.State.String(), st.Err
		}}
	}, warn)
}

// connectMCP connects to the MCP servers of cfg, binding their tools into
// reg, and waits for them (see waitMCP): for the commands that start no
// runtime, such as tools list. close disconnects them.
func connectMCP(ctx context.Context, cfg *config.Config, reg *toolsys.Registry, getenv func(string) string, log zerolog.Logger, warn io.Writer) (close func(), err error) {
	conns := make([]*mcp.Conn, 0, len(cfg.MCPServers))
	close = func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}
	for _, s := range cfg.MCPServers {
		sc, err := s.ServerConfig(getenv)
		if err != nil {
			close()
			return nil, err
		}
		// One failed attempt is enough to report: the command does not
		// stay to reconnect.
		c, err := mcp.NewConn(sc, mcp.ConnOptions{Logger: log, MaxFailures: 1})
		if err != nil {
			close()
			return nil, err
		}
		c.Bind(reg)
		c.Start(ctx)
		conns = append(conns, c)
	}
	err = waitMCP(ctx, cfg.MCPServers, func(i int) mcpWaiter {
		c := conns[i]
		return mcpWaiter{ready: c.Ready, status: func() (string, error) {
			st := c.Status()
			return st.State.String(), st.Err
		}}
	}, warn)
	if err != nil {
		close()
		return nil, err
	}
	return close, nil
}
