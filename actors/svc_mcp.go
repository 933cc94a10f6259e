package actors

// This file holds the MCP service: one connection actor per configured
// server (mcpConnActor), supervised by the MCP strategy, and the record the
// runtime keeps of each server.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/supervisor"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// mcpSet holds the runtime's MCP servers: one connection actor each,
// supervised by the MCP strategy, binding the servers' tools into reg.
type mcpSet struct {
	servers  []*mcpServer // in configuration order
	byName   map[string]*mcpServer
	reg      *toolsys.Registry
	strategy actor.SupervisorStrategy
	// elicits holds the servers' questions of no single session.
	elicits elicitList
	// closing is closed when the runtime starts stopping the servers: the
	// questions still pending are cancelled.
	closing chan struct{}
	// samplings numbers the sampling requests of sessions.
	samplings atomic.Uint64
}

// mcpServer is the runtime's record of one MCP server. It outlives the
// restarts of the server's connection actor.
type mcpServer struct {
	cfg mcp.ServerConfig
	pid *actor.PID

	mu      sync.Mutex
	conn    *mcp.Conn // the current actor's connection
	status  mcp.Status
	stopErr error // why the supervisor stopped the actor for good
	closed  bool  // the runtime has shut down
	// restarts counts the restarts of the connection actor (Runtime.Tree).
	restarts int
	changed  chan struct{}
}

// update changes the record under its lock and wakes MCPServer.Ready.
func (s *mcpServer) update(change func(*mcpServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change(s)
	close(s.changed)
	s.changed = make(chan struct{})
}

// configureMCP validates Config.MCPServers and chooses the registry the
// servers' tools are bound into: Config.Tools itself when it is a
// *toolsys.Registry, so that remote tools pass the same permission
// pipeline, secret handling and output cap as local ones; a registry of
// the runtime's own (which then serves as its Tools) when Config.Tools is
// nil. Any other Tools implementation is refused, because the runtime
// could not put the remote tools behind its permission checks.
func (rt *Runtime) configureMCP() error {
	if len(rt.cfg.MCPServers) == 0 {
		return nil
	}
	set := &mcpSet{byName: make(map[string]*mcpServer, len(rt.cfg.MCPServers)), closing: make(chan struct{})}
	for i, cfg := range rt.cfg.MCPServers {
		field := fmt.Sprintf("MCPServers[%d]", i)
		if err := cfg.Validate(); err != nil {
			return configErr(field, "%v", err)
		}
		if set.byName[cfg.Name] != nil {
			return configErr(field, "duplicate server name %q", cfg.Name)
		}
		cfg.Args, cfg.Env = append([]string(nil), cfg.Args...), append([]string(nil), cfg.Env...)
		srv := &mcpServer{cfg: cfg, status: mcp.Status{Server: cfg.Name}, changed: make(chan struct{})}
		set.servers = append(set.servers, srv)
		set.byName[cfg.Name] = srv
	}
	switch tools := rt.cfg.Tools.(type) {
	case nil:
		set.reg = toolsys.NewRegistry(toolsys.Config{Logger: rt.logger})
		rt.cfg.Tools = set.reg
	case *toolsys.Registry:
		if tools == nil {
			return configErr("Tools", "a nil *toolsys.Registry")
		}
		set.reg = tools
	default:
		return configErr("Tools", "MCPServers need Tools to be a *toolsys.Registry (or nil), to register the servers' tools behind its permission checks; got %T", tools)
	}
	rt.mcp = set
	return nil
}

// startMCP spawns one connection actor per server, named mcp/<name>.
func (rt *Runtime) startMCP() {
	if rt.mcp == nil {
		return
	}
	rt.mcp.strategy = supervisor.NewMCPStrategy(supervisor.MCPOptions{
		Budget: supervisor.NewBudget(supervisor.BudgetOptions{MaxFailures: 5, Window: time.Minute, Clock: rt.clock}),
		Clock:  rt.clock,
		Rand:   rt.rnd,
		Logger: rt.logger,
		OnStop: rt.onMCPStop,
	})
	for _, srv := range rt.mcp.servers {
		props := actor.PropsFromProducer(func() actor.Actor { return &mcpConnActor{rt: rt, srv: srv} },
			actor.WithGuardian(rt.mcp.strategy))
		pid, err := rt.system.Root.SpawnNamed(props, "mcp/"+srv.cfg.Name)
		if err != nil {
			err = fmt.Errorf("actors: spawn mcp/%s: %w", srv.cfg.Name, err)
			rt.logger.Error().Err(err).Msg("mcp server not started")
			srv.update(func(s *mcpServer) { s.stopErr = err })
			continue
		}
		srv.pid = pid
	}
}

// onMCPStop runs when the supervisor stops a connection actor for good:
// the server is reported as failed, with the reason.
func (rt *Runtime) onMCPStop(child *actor.PID, reason error) {
	for _, srv := range rt.mcp.servers {
		// Matched by name: the actor may fail before startMCP has stored
		// its PID.
		if child.GetId() == "mcp/"+srv.cfg.Name {
			rt.logger.Error().Str("mcp_server", srv.cfg.Name).Err(reason).Msg("mcp server stopped for good")
			srv.update(func(s *mcpServer) { s.stopErr = reason })
			return
		}
	}
}

// stopMCP stops the connection actors (closing their connections and
// unregistering their tools) and waits for them until ctx is done.
func (rt *Runtime) stopMCP(ctx context.Context) {
	if rt.mcp == nil {
		return
	}
	close(rt.mcp.closing)
	for _, srv := range rt.mcp.servers {
		if srv.pid != nil {
			_ = waitFuture(ctx, rt.system.Root.PoisonFuture(srv.pid))
		}
		srv.update(func(s *mcpServer) { s.closed = true })
	}
}

// mcpFailed tells a connection actor that its connection gave up.
type mcpFailed struct {
	conn *mcp.Conn
	err  error
}

// mcpConnActor owns the connection to one MCP server. The connection
// reconnects by itself, with backoff, while the server is flaky; when it
// gives up the actor fails with an unrecoverable error, so that its
// supervisor stops it and the runtime reports why. Any other failure
// restarts the actor, after the MCP strategy's backoff, with a fresh
// connection.
type mcpConnActor struct {
	rt   *Runtime
	srv  *mcpServer
	conn *mcp.Conn
}

var _ actor.Actor = (*mcpConnActor)(nil)

// Receive implements actor.Actor.
func (a *mcpConnActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.connect(ctx)
	case *actor.Restarting, *actor.Stopping:
		if _, restarting := m.(*actor.Restarting); restarting {
			a.rt.tel.Restarted(a.rt.ctx, "mcp")
			a.srv.update(func(s *mcpServer) { s.restarts++ })
		}
		if a.conn != nil {
			_ = a.conn.Close()
			a.conn = nil
		}
	case *mcpFailed:
		if m.conn == a.conn {
			panic(supervisor.Unrecoverable(m.err))
		}
	}
}

// connect creates the connection, binds its tools and starts it.
func (a *mcpConnActor) connect(ctx actor.Context) {
	rt, srv := a.rt, a.srv
	self, root := ctx.Self(), rt.system.Root
	var conn *mcp.Conn
	onState := func(st mcp.Status) {
		srv.update(func(s *mcpServer) { s.status = st })
		if st.State == mcp.StateFailed {
			root.Send(self, &mcpFailed{conn: conn, err: st.Err})
		}
	}
	cfg := srv.cfg
	if cfg.Elicit == nil {
		cfg.Elicit = rt.mcpElicit()
	}
	if cfg.Sampling && cfg.Sample == nil {
		cfg.Sample = rt.mcpSample(cfg.Name)
	}
	conn, err := mcp.NewConn(cfg, mcp.ConnOptions{
		Logger:  rt.logger,
		Sleep:   rt.sleep,
		Rand:    func() float64 { return float64(rt.rnd.Int64N(1<<53)) / (1 << 53) },
		Now:     rt.clock.Now,
		OnState: onState,
	})
	if err != nil {
		// configureMCP validated the configuration.
		panic(supervisor.Unrecoverable(err))
	}
	a.conn = conn
	srv.update(func(s *mcpServer) { s.conn = conn })
	conn.Bind(rt.mcp.reg)
	conn.Start(rt.ctx)
}

// sleep waits d on the runtime's clock, or until ctx is done.
func (rt *Runtime) sleep(ctx context.Context, d time.Duration) error {
	done := make(chan struct{})
	stop := rt.clock.AfterFunc(d, func() { close(done) })
	defer stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
