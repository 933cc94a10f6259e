package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
)

// State is where a Conn is in its life.
type State int

// The states of a Conn.
const (
	// StateIdle: Start has not been called.
	StateIdle State = iota
	// StateConnecting: an attempt to connect is under way.
	StateConnecting
	// StateReady: the server is connected and its tools are current.
	StateReady
	// StateBackoff: the last attempt or connection failed; the Conn waits
	// before the next attempt. Calls fail with ErrServerUnavailable.
	StateBackoff
	// StateFailed: the Conn gave up (see ConnOptions.MaxFailures). Status.Err
	// says why; the server's tools are unregistered.
	StateFailed
	// StateClosed: Close was called or the Start context ended.
	StateClosed
)

// String returns the state's lower-case name.
func (s State) String() string {
	switch s {
	case StateIdle:
		return "idle"
	case StateConnecting:
		return "connecting"
	case StateReady:
		return "ready"
	case StateBackoff:
		return "backoff"
	case StateFailed:
		return "failed"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// Status is a snapshot of a Conn.
type Status struct {
	Server string
	State  State
	// Err is the last failure (nil once a connection is up again, and in
	// StateFailed the reason the Conn gave up, wrapping ErrGaveUp).
	Err error
	// Failures counts consecutive failed attempts and short-lived
	// connections.
	Failures int
	// Connects counts successful connections since Start.
	Connects int
	// PID is the current server process (0 if none or not stdio).
	PID int
	// Tools is how many tools the server currently offers.
	Tools int
}

// Defaults of ConnOptions.
const (
	DefaultMaxFailures = 5
	DefaultStableAfter = 30 * time.Second
)

// ConnOptions configures a Conn. The zero value is valid.
type ConnOptions struct {
	// Logger receives connection events. The zero Logger discards them.
	Logger zerolog.Logger
	// ClientVersion is the version agcore announces. Empty means "dev".
	ClientVersion string
	// Backoff spaces reconnection attempts. The zero value waits 500ms,
	// 1s, 2s, ... up to 30s, with up to 20% jitter.
	Backoff Backoff
	// MaxFailures is how many consecutive failures (failed starts, and
	// connections that died within StableAfter) make the Conn give up.
	// Zero means DefaultMaxFailures; negative means never give up (the
	// delay still grows to Backoff.Max, so it never spins).
	MaxFailures int
	// StableAfter is how long a connection must live for its end not to
	// count towards MaxFailures. Zero means DefaultStableAfter.
	StableAfter time.Duration
	// Sleep waits between attempts; it must return ctx's error when ctx
	// ends first. Nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand draws the jitter, uniformly from [0, 1). Nil means math/rand/v2.
	Rand func() float64
	// Now is the clock for StableAfter. Nil means time.Now.
	Now func() time.Time
	// OnState, when set, is called after every state change, in order,
	// from the Conn's goroutine. It must not block for long.
	OnState func(Status)
}

// Conn is a supervised connection to one MCP server: it connects, keeps the
// server's tools current in the registries bound to it, and reconnects with
// exponential backoff when the server exits or its transport breaks. Calls
// made while the server is down fail at once with a *ServerError wrapping
// ErrServerUnavailable; calls in flight when it dies fail the same way. It
// is safe for concurrent use.
type Conn struct {
	cfg  ServerConfig
	opts ConnOptions
	log  zerolog.Logger

	mu      sync.Mutex
	status  Status
	client  *Client
	changed chan struct{} // closed and replaced on every status change
	tools   map[string]toolsys.Tool
	regs    []*toolsys.Registry
	cancel  context.CancelFunc
	done    chan struct{}
	// notify serialises OnState calls.
	notify sync.Mutex
}

// NewConn returns a Conn for cfg; Start connects it.
func NewConn(cfg ServerConfig, opts ConnOptions) (*Conn, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.OAuth != nil && cfg.OAuth.Store == nil {
		// The tokens outlive each attempt: a reconnection reuses them.
		oc := *cfg.OAuth
		oc.Store = NewMemoryTokenStore()
		cfg.OAuth = &oc
	}
	if opts.MaxFailures == 0 {
		opts.MaxFailures = DefaultMaxFailures
	}
	if opts.StableAfter <= 0 {
		opts.StableAfter = DefaultStableAfter
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Conn{
		cfg: cfg, opts: opts,
		log:     opts.Logger.With().Str("mcp_server", cfg.Name).Logger(),
		status:  Status{Server: cfg.Name},
		changed: make(chan struct{}),
		tools:   map[string]toolsys.Tool{},
	}, nil
}

// Name returns the server's configured name.
func (c *Conn) Name() string { return c.cfg.Name }

// Start connects in the background and keeps the connection up until ctx
// ends or Close is called. Use Ready to wait for the first connection.
// Calling Start twice is a no-op.
func (c *Conn) Start(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return
	}
	ctx, c.cancel = context.WithCancel(ctx)
	done := make(chan struct{})
	c.done = done
	go func() {
		defer close(done)
		c.run(ctx)
	}()
}

// Close stops the Conn: the session is closed (a stdio server is asked to
// exit, then terminated), calls in flight fail with ErrClosed, and the
// server's tools are unregistered from the bound registries.
func (c *Conn) Close() error {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	if done == nil {
		// Never started: a later Start is a no-op.
		c.done = make(chan struct{})
		close(c.done)
		c.mu.Unlock()
		c.finish(StateClosed, nil)
		return nil
	}
	c.mu.Unlock()
	cancel()
	<-done
	return nil
}

// Ready waits until the server is connected. It returns nil then, the
// reason when the Conn gave up or was closed, or ctx's error.
func (c *Conn) Ready(ctx context.Context) error {
	for {
		c.mu.Lock()
		st, ch := c.status, c.changed
		c.mu.Unlock()
		switch st.State {
		case StateReady:
			return nil
		case StateFailed:
			return st.Err
		case StateClosed:
			return &ServerError{Server: c.cfg.Name, Op: "connect", Err: ErrClosed}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mcp server %s: waiting for the connection (%s): %w", c.cfg.Name, st.State, ctx.Err())
		case <-ch:
		}
	}
}

// Changed returns a channel closed at the next status change.
func (c *Conn) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Status returns a snapshot of the Conn.
func (c *Conn) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Client returns the current session, or nil while the server is down.
func (c *Conn) Client() *Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.client
}

// Tools returns the server's tools as they stand, bound to the Conn: they
// keep working across reconnections.
func (c *Conn) Tools() []toolsys.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]toolsys.Tool, 0, len(c.tools))
	for _, t := range c.tools {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b toolsys.Tool) int { return cmpString(a.Name(), b.Name()) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Bind registers the server's current tools in reg, with source mcp, and
// keeps them in step: tools that appear are registered, tools that vanish
// or change are unregistered (and re-registered), and all are unregistered
// when the Conn gives up or closes. A name already taken in reg by another tool is left
// alone (and logged).
func (c *Conn) Bind(reg *toolsys.Registry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.Contains(c.regs, reg) {
		return
	}
	c.regs = append(c.regs, reg)
	for _, t := range c.tools {
		c.register(reg, t)
	}
}

// register adds t to reg; the caller holds c.mu.
func (c *Conn) register(reg *toolsys.Registry, t toolsys.Tool) {
	if err := reg.Register(t, toolsys.WithSource(toolsys.SourceMCP), toolsys.WithCategory("mcp"), toolsys.WithTags("mcp", "mcp:"+c.cfg.Name)); err != nil {
		c.log.Warn().Str("tool", t.Name()).Err(err).Msg("mcp: tool not registered")
	}
}

// unregister removes t from reg if reg holds this very tool; the caller
// holds c.mu.
func (c *Conn) unregister(reg *toolsys.Registry, t toolsys.Tool) {
	if cur, ok := reg.Get(t.Name()); ok && cur == t {
		reg.Unregister(t.Name())
	}
}

// run is the supervision loop.
func (c *Conn) run(ctx context.Context) {
	failures := 0
	var lastErr error
	for {
		if failures > 0 {
			c.setStatus(func(s *Status) { s.State, s.Err, s.Failures, s.PID = StateBackoff, lastErr, failures, 0 })
			d := c.opts.Backoff.Delay(failures, c.opts.Rand)
			c.log.Warn().Err(lastErr).Int("failures", failures).Dur("backoff", d).Msg("mcp: reconnecting after backoff")
			if err := c.opts.Sleep(ctx, d); err != nil || ctx.Err() != nil {
				break
			}
		}
		c.setStatus(func(s *Status) { s.State = StateConnecting })
		cl, err := Connect(ctx, c.cfg, Options{Logger: c.opts.Logger, ClientVersion: c.opts.ClientVersion, OnToolsChanged: c.syncTools})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failures, lastErr = failures+1, err
			if errors.Is(err, ErrAuthorizationRequired) {
				// No attempt can succeed until someone authorizes.
				reason := &ServerError{Server: c.cfg.Name, Op: "connect", Err: fmt.Errorf("%w: %w", ErrGaveUp, err)}
				c.log.Error().Err(reason).Msg("mcp: giving up")
				c.finish(StateFailed, reason)
				return
			}
			if c.gaveUp(failures, err) {
				return
			}
			continue
		}
		started := c.opts.Now()
		c.up(cl)
		select {
		case <-ctx.Done():
		case <-cl.Done():
		}
		if ctx.Err() != nil {
			_ = cl.Close()
			break
		}
		lastErr = cl.Err()
		c.down()
		_ = cl.Close()
		if c.opts.Now().Sub(started) >= c.opts.StableAfter {
			failures = 0
		}
		failures++
		c.log.Warn().Err(lastErr).Msg("mcp: connection lost")
		if c.gaveUp(failures, lastErr) {
			return
		}
	}
	c.finish(StateClosed, nil)
}

// gaveUp ends the loop, reporting why, when failures reached the limit.
func (c *Conn) gaveUp(failures int, err error) bool {
	if c.opts.MaxFailures < 0 || failures < c.opts.MaxFailures {
		return false
	}
	cause := err
	if se, ok := errors.AsType[*ServerError](err); ok {
		cause = se.Err
	}
	reason := &ServerError{Server: c.cfg.Name, Op: "connect",
		Err: fmt.Errorf("%w after %d consecutive failures: %w", ErrGaveUp, failures, cause)}
	c.log.Error().Err(reason).Msg("mcp: giving up")
	c.finish(StateFailed, reason)
	return true
}

// finish unregisters every tool and enters a final state.
func (c *Conn) finish(state State, err error) {
	c.mu.Lock()
	for _, t := range c.tools {
		for _, reg := range c.regs {
			c.unregister(reg, t)
		}
	}
	c.tools = map[string]toolsys.Tool{}
	c.client = nil
	c.mu.Unlock()
	c.setStatus(func(s *Status) { s.State, s.Err, s.PID, s.Tools = state, err, 0, 0 })
}

// up installs a new session and its tools.
func (c *Conn) up(cl *Client) {
	c.mu.Lock()
	c.client = cl
	c.mu.Unlock()
	c.syncTools()
	c.setStatus(func(s *Status) {
		s.State, s.Err, s.PID = StateReady, nil, cl.PID()
		s.Connects++
	})
	c.log.Info().Int("pid", cl.PID()).Msg("mcp: connected")
}

// down forgets the session; the tools stay registered and fail fast.
func (c *Conn) down() {
	c.mu.Lock()
	c.client = nil
	c.mu.Unlock()
}

// syncTools rebuilds the tools from the current session's list and brings
// the bound registries in step.
func (c *Conn) syncTools() {
	c.mu.Lock()
	cl := c.client
	if cl == nil {
		c.mu.Unlock()
		return
	}
	fresh := map[string]toolsys.Tool{}
	for _, t := range buildTools(c, c.cfg, cl.toolDefs(), c.log) {
		fresh[t.Name()] = t
	}
	for name, old := range c.tools {
		if nt, ok := fresh[name]; ok && sameTool(old, nt) {
			fresh[name] = old // keep the registered instance
			continue
		}
		for _, reg := range c.regs {
			c.unregister(reg, old)
		}
	}
	for name, t := range fresh {
		if c.tools[name] == t {
			continue
		}
		for _, reg := range c.regs {
			c.register(reg, t)
		}
	}
	c.tools = fresh
	n := len(fresh)
	c.mu.Unlock()
	c.setStatus(func(s *Status) { s.Tools = n })
}

// sameTool reports whether a and b describe the same tool to a model.
func sameTool(a, b toolsys.Tool) bool {
	return a.Name() == b.Name() && a.Description() == b.Description() &&
		bytes.Equal(a.Schema(), b.Schema()) && a.Permission() == b.Permission()
}

// setStatus changes the status, wakes the waiters and tells OnState.
func (c *Conn) setStatus(change func(*Status)) {
	c.notify.Lock()
	defer c.notify.Unlock()
	c.mu.Lock()
	change(&c.status)
	st := c.status
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	if c.opts.OnState != nil {
		c.opts.OnState(st)
	}
}

// current returns the live session or the error explaining why there is
// none.
func (c *Conn) current(op string) (*Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client != nil {
		return c.client, nil
	}
	switch c.status.State {
	case StateClosed:
		return nil, &ServerError{Server: c.cfg.Name, Op: op, Err: ErrClosed}
	case StateFailed:
		return nil, unavailable(c.cfg.Name, op, c.status.Err)
	case StateIdle:
		return nil, unavailable(c.cfg.Name, op, errors.New("not started"))
	}
	if c.status.Err != nil {
		return nil, unavailable(c.cfg.Name, op, fmt.Errorf("reconnecting after: %w", c.status.Err))
	}
	return nil, unavailable(c.cfg.Name, op, errors.New("connecting"))
}

// CallTool calls a remote tool by its server-side name on the current
// session (see Client.CallTool).
func (c *Conn) CallTool(ctx context.Context, name string, args json.RawMessage) (*sdk.CallToolResult, error) {
	cl, err := c.current("call tool " + name)
	if err != nil {
		return nil, err
	}
	return cl.CallTool(ctx, name, args)
}

// CallToolProgress calls a remote tool on the current session, passing
// its progress notifications to onProgress (see Client.CallToolProgress).
func (c *Conn) CallToolProgress(ctx context.Context, name string, args json.RawMessage, onProgress func(Progress)) (*sdk.CallToolResult, error) {
	cl, err := c.current("call tool " + name)
	if err != nil {
		return nil, err
	}
	return cl.CallToolProgress(ctx, name, args, onProgress)
}

// ListResources lists the server's resources on the current session.
func (c *Conn) ListResources(ctx context.Context) ([]*sdk.Resource, error) {
	cl, err := c.current("list resources")
	if err != nil {
		return nil, err
	}
	return cl.ListResources(ctx)
}

// ReadResource reads a resource on the current session.
func (c *Conn) ReadResource(ctx context.Context, uri string) (*sdk.ReadResourceResult, error) {
	cl, err := c.current("read resource " + uri)
	if err != nil {
		return nil, err
	}
	return cl.ReadResource(ctx, uri)
}

// ListPrompts lists the server's prompts on the current session.
func (c *Conn) ListPrompts(ctx context.Context) ([]*sdk.Prompt, error) {
	cl, err := c.current("list prompts")
	if err != nil {
		return nil, err
	}
	return cl.ListPrompts(ctx)
}

// GetPrompt renders a prompt on the current session.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	cl, err := c.current("get prompt " + name)
	if err != nil {
		return nil, err
	}
	return cl.GetPrompt(ctx, name, args)
}
