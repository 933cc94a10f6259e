package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
)

// session is what a Client needs of an SDK client session;
// *sdk.ClientSession implements it.
type session interface {
	InitializeResult() *sdk.InitializeResult
	ListTools(ctx context.Context, p *sdk.ListToolsParams) (*sdk.ListToolsResult, error)
	CallTool(ctx context.Context, p *sdk.CallToolParams) (*sdk.CallToolResult, error)
	ListResources(ctx context.Context, p *sdk.ListResourcesParams) (*sdk.ListResourcesResult, error)
	ReadResource(ctx context.Context, p *sdk.ReadResourceParams) (*sdk.ReadResourceResult, error)
	ListPrompts(ctx context.Context, p *sdk.ListPromptsParams) (*sdk.ListPromptsResult, error)
	GetPrompt(ctx context.Context, p *sdk.GetPromptParams) (*sdk.GetPromptResult, error)
	Close() error
	Wait() error
}

var _ session = (*sdk.ClientSession)(nil)

// Client is one initialized session with an MCP server. It is safe for
// concurrent use: calls run concurrently on the session. A Client does not
// reconnect; a Conn does.
type Client struct {
	cfg  ServerConfig
	opts Options
	log  zerolog.Logger
	sess session
	att  *attempt

	done    chan struct{} // closed when the session has ended
	doneErr error         // why, readable once done is closed
	closed  atomic.Bool   // Close was called
	// died is set when the session ended before Close was called: the
	// server exited or its connection broke. A call that fails then is
	// the server's failure, even if Close runs before the call reports it.
	died atomic.Bool

	refresh     chan struct{} // a tools/list_changed notification is pending
	relist      chan struct{} // a resources or prompts list_changed notification is pending
	stopRefresh context.CancelFunc
	wg          sync.WaitGroup

	// calls are the tool calls in flight, by token (caller.go); exactHTTP
	// says whether the transport marks the server's requests with them.
	callsMu   sync.Mutex
	calls     map[string]inflightCall
	exactHTTP bool

	progressMu sync.Mutex
	progressN  int64
	progressFn map[string]func(Progress)

	// cache keeps resources read under a subscription (resource_cache.go).
	cache resourceCache

	mu        sync.RWMutex
	defs      []*sdk.Tool
	tools     []toolsys.Tool
	resources []*sdk.Resource
	prompts   []*sdk.Prompt
}

// Connect starts or reaches the server cfg describes, initializes the
// session and lists the server's tools (every page), resources and prompts
// (when the server has them), all within cfg.InitTimeout. A failure is a
// *ServerError naming the server; one that means the server could not be
// reached or died wraps ErrServerUnavailable, with the end of the server's
// stderr when it wrote any.
func Connect(ctx context.Context, cfg ServerConfig, opts Options) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := opts.Logger.With().Str("mcp_server", cfg.Name).Logger()
	ictx, cancel := context.WithTimeout(ctx, cfg.initTimeout())
	defer cancel()
	att, err := newAttempt(ictx, cfg, log)
	if err != nil {
		return nil, unavailable(cfg.Name, "connect", err)
	}
	c := &Client{cfg: cfg, opts: opts, log: log, att: att, exactHTTP: att.exact, done: make(chan struct{}), refresh: make(chan struct{}, 1), relist: make(chan struct{}, 1)}
	version := opts.ClientVersion
	if version == "" {
		version = "dev"
	}
	sc := sdk.NewClient(&sdk.Implementation{Name: "agcore", Version: version}, c.clientOptions())
	c.addRoots(sc)
	sess, err := sc.Connect(ictx, att.transport, nil)
	if err != nil {
		return nil, c.connectError(err)
	}
	c.sess = sess
	go func() {
		err := sess.Wait()
		if err == nil {
			err = errors.New("the session ended")
		}
		c.doneErr = err
		if !c.closed.Load() {
			c.died.Store(true)
		}
		close(c.done)
	}()
	if err := c.list(ictx); err != nil {
		_ = sess.Close()
		return nil, c.connectError(err)
	}
	c.subscribeLogs(ictx)
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	c.stopRefresh = stop
	c.wg.Go(func() { c.refreshLoop(rctx) })
	log.Debug().Int("pid", att.pid()).Int("tools", len(c.Tools())).Msg("mcp server connected")
	return c, nil
}

// connectError wraps a failure to connect, with the server's stderr tail.
func (c *Client) connectError(err error) error {
	if tail := c.att.stderr.String(); tail != "" {
		err = fmt.Errorf("%w (server stderr: %s)", err, tail)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s: %w", c.cfg.initTimeout(), err)
	}
	return unavailable(c.cfg.Name, "connect", err)
}

// list fetches the tools, resources and prompts.
func (c *Client) list(ctx context.Context) error {
	if err := c.listTools(ctx); err != nil {
		return err
	}
	return c.listCatalog(ctx)
}

// listCatalog fetches the resources and prompts, when the server has them.
func (c *Client) listCatalog(ctx context.Context) error {
	caps := c.sess.InitializeResult().Capabilities
	var resources []*sdk.Resource
	if caps != nil && caps.Resources != nil {
		var err error
		if resources, err = c.ListResources(ctx); err != nil {
			return err
		}
	}
	var prompts []*sdk.Prompt
	if caps != nil && caps.Prompts != nil {
		var err error
		if prompts, err = c.ListPrompts(ctx); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.resources, c.prompts = resources, prompts
	c.mu.Unlock()
	return nil
}

// listTools fetches every page of tools/list and rebuilds the adapters.
func (c *Client) listTools(ctx context.Context) error {
	var defs []*sdk.Tool
	params := &sdk.ListToolsParams{}
	for {
		res, err := c.sess.ListTools(ctx, params)
		if err != nil {
			return c.wrap(ctx, "list tools", err)
		}
		defs = append(defs, res.Tools...)
		if res.NextCursor == "" || res.NextCursor == params.Cursor {
			break
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
	tools := buildTools(c, c.cfg, defs, c.log)
	c.mu.Lock()
	c.defs, c.tools = defs, tools
	c.mu.Unlock()
	return nil
}

// signalRefresh asks the refresh loop for a new tools/list.
func (c *Client) signalRefresh() {
	select {
	case c.refresh <- struct{}{}:
	default:
	}
}

// signalRelist asks the refresh loop for new resource and prompt lists.
func (c *Client) signalRelist() {
	select {
	case c.relist <- struct{}{}:
	default:
	}
}

// refreshLoop refreshes the tool list on notifications/tools/list_changed,
// and the resource and prompt lists on their list_changed notifications,
// off the SDK's notification handler.
func (c *Client) refreshLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.done:
			return
		case <-c.relist:
			lctx, cancel := context.WithTimeout(ctx, c.cfg.initTimeout())
			err := c.listCatalog(lctx)
			cancel()
			if err != nil {
				c.log.Warn().Err(err).Msg("mcp: refreshing the resource and prompt lists failed")
			} else if c.opts.OnCatalogChanged != nil {
				c.opts.OnCatalogChanged()
			}
			continue
		case <-c.refresh:
		}
		lctx, cancel := context.WithTimeout(ctx, c.cfg.initTimeout())
		err := c.listTools(lctx)
		cancel()
		if err != nil {
			c.log.Warn().Err(err).Msg("mcp: refreshing the tool list failed")
			continue
		}
		if c.opts.OnToolsChanged != nil {
			c.opts.OnToolsChanged()
		}
	}
}

// Name returns the server's configured name.
func (c *Client) Name() string { return c.cfg.Name }

// PID returns the id of the server process the Client started, or 0 for a
// server reached over HTTP or a custom transport.
func (c *Client) PID() int { return c.att.pid() }

// Done is closed when the session has ended: the server exited, the
// transport broke, or Close was called.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the session ended (nil while it is alive), as a
// *ServerError wrapping ErrServerUnavailable.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.downError("session")
	default:
		return nil
	}
}

// downError says that the session is over, for operation op.
func (c *Client) downError(op string) error {
	if c.closedFirst() {
		return &ServerError{Server: c.cfg.Name, Op: op, Err: ErrClosed}
	}
	err := fmt.Errorf("the server exited or its connection broke: %w", c.doneErr)
	if tail := c.att.stderr.String(); tail != "" {
		err = fmt.Errorf("%w (server stderr: %s)", err, tail)
	}
	return unavailable(c.cfg.Name, op, err)
}

// InitializeResult returns what the server said about itself.
func (c *Client) InitializeResult() *sdk.InitializeResult { return c.sess.InitializeResult() }

// Tools returns the server's tools as registry entries named
// mcp__<server>__<tool> (see ToolName), plus the resource and prompt tools
// when the config asks for them. A remote tool whose input schema cannot be
// compiled is left out (and logged).
func (c *Client) Tools() []toolsys.Tool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.tools)
}

// toolDefs returns the remote tool definitions last listed.
func (c *Client) toolDefs() []*sdk.Tool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.defs
}

// Resources returns the resources listed at connection, and again after
// each notifications/resources/list_changed.
func (c *Client) Resources() []*sdk.Resource {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.resources)
}

// Prompts returns the prompts listed at connection, and again after each
// notifications/prompts/list_changed.
func (c *Client) Prompts() []*sdk.Prompt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.prompts)
}

// CallTool calls the remote tool named name (its server-side name) with raw
// JSON arguments, without validation: the adapters of Tools validate first.
// A failure of the session is a *ServerError wrapping ErrServerUnavailable;
// an error the server answered with is a *ServerError wrapping the SDK's
// *jsonrpc.Error.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage) (*sdk.CallToolResult, error) {
	return c.CallToolProgress(ctx, name, args, nil)
}

// CallToolProgress is CallTool with a progress token: the server's
// progress notifications for the call are passed to onProgress (when not
// nil), from the connection's goroutines, until the call returns.
// Notifications are handled concurrently with the reply: one that arrives
// after the call has returned is dropped. While the call is in flight, the
// server's questions and sampling requests may be attributed to the Caller
// ctx carries (see WithCaller and Attribution).
func (c *Client) CallToolProgress(ctx context.Context, name string, args json.RawMessage, onProgress func(Progress)) (*sdk.CallToolResult, error) {
	op := "call tool " + name
	if err := c.usable(op); err != nil {
		return nil, err
	}
	caller, known := CallerFrom(ctx)
	token, untrack := c.track(caller, known)
	defer untrack()
	ctx = context.WithValue(ctx, callToken{}, token)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	if onProgress != nil {
		token := c.watchProgress(onProgress)
		defer c.unwatchProgress(token)
		params.SetProgressToken(token)
	}
	res, err := c.sess.CallTool(ctx, params)
	if err != nil {
		return nil, c.wrap(ctx, op, err)
	}
	return res, nil
}

// ListResources lists every page of resources/list.
func (c *Client) ListResources(ctx context.Context) ([]*sdk.Resource, error) {
	if err := c.usable("list resources"); err != nil {
		return nil, err
	}
	var out []*sdk.Resource
	params := &sdk.ListResourcesParams{}
	for {
		res, err := c.sess.ListResources(ctx, params)
		if err != nil {
			return nil, c.wrap(ctx, "list resources", err)
		}
		out = append(out, res.Resources...)
		if res.NextCursor == "" || res.NextCursor == params.Cursor {
			return out, nil
		}
		params = &sdk.ListResourcesParams{Cursor: res.NextCursor}
	}
}

// ReadResource reads the resource at uri. When the server offers
// resource subscriptions, the Client subscribes to uri before its first
// read and answers later reads from what it read, until the server says the
// resource was updated; the Client keeps up to 64 resources, and a new
// connection starts with none.
func (c *Client) ReadResource(ctx context.Context, uri string) (*sdk.ReadResourceResult, error) {
	op := "read resource " + uri
	if err := c.usable(op); err != nil {
		return nil, err
	}
	keep := c.canSubscribe()
	if keep {
		if res, ok := c.cache.get(uri); ok {
			return res, nil
		}
		keep = c.subscribe(ctx, uri)
	}
	gen := c.cache.gen(uri)
	res, err := c.sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, c.wrap(ctx, op, err)
	}
	if keep {
		c.cache.put(uri, gen, res)
	}
	return res, nil
}

// ListPrompts lists every page of prompts/list.
func (c *Client) ListPrompts(ctx context.Context) ([]*sdk.Prompt, error) {
	if err := c.usable("list prompts"); err != nil {
		return nil, err
	}
	var out []*sdk.Prompt
	params := &sdk.ListPromptsParams{}
	for {
		res, err := c.sess.ListPrompts(ctx, params)
		if err != nil {
			return nil, c.wrap(ctx, "list prompts", err)
		}
		out = append(out, res.Prompts...)
		if res.NextCursor == "" || res.NextCursor == params.Cursor {
			return out, nil
		}
		params = &sdk.ListPromptsParams{Cursor: res.NextCursor}
	}
}

// GetPrompt renders the prompt name with args.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	op := "get prompt " + name
	if err := c.usable(op); err != nil {
		return nil, err
	}
	res, err := c.sess.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, c.wrap(ctx, op, err)
	}
	return res, nil
}

// usable fails fast when the session is over.
func (c *Client) usable(op string) error {
	if c.closedFirst() {
		return &ServerError{Server: c.cfg.Name, Op: op, Err: ErrClosed}
	}
	select {
	case <-c.done:
		return c.downError(op)
	default:
		return nil
	}
}

// wrap names the server and operation of a failed request; a broken
// session wraps ErrServerUnavailable.
func (c *Client) wrap(ctx context.Context, op string, err error) error {
	switch {
	case c.closedFirst():
		return &ServerError{Server: c.cfg.Name, Op: op, Err: fmt.Errorf("%w: %w", ErrClosed, err)}
	case ctx.Err() != nil:
		return &ServerError{Server: c.cfg.Name, Op: op, Err: err}
	case IsConnectionError(err):
		if tail := c.att.stderr.String(); tail != "" {
			err = fmt.Errorf("%w (server stderr: %s)", err, tail)
		}
		return unavailable(c.cfg.Name, op, err)
	}
	return &ServerError{Server: c.cfg.Name, Op: op, Err: err}
}

// closedFirst reports whether Close was called before the session ended
// of itself, so that a failure is ErrClosed rather than the server's.
func (c *Client) closedFirst() bool { return c.closed.Load() && !c.died.Load() }

// Close ends the session: for a stdio server, its stdin is closed, and it
// is terminated if it does not exit within two seconds. Calls in flight
// fail with ErrClosed. Close is idempotent.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	if c.stopRefresh != nil {
		c.stopRefresh()
	}
	err := c.sess.Close()
	c.wg.Wait()
	<-c.done
	if err != nil && !IsConnectionError(err) {
		return &ServerError{Server: c.cfg.Name, Op: "close", Err: err}
	}
	return nil
}

// RemoteTools returns the server's tool definitions as it listed them.
func (c *Client) RemoteTools() []*sdk.Tool {
	return slices.Clone(c.toolDefs())
}
