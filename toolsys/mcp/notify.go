package mcp

import (
	"context"
	"net/url"
	"path/filepath"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// clientOptions are the SDK client's options: the capabilities agcore
// offers this server (roots when cfg.Roots is set, elicitation when
// cfg.Elicit is, sampling when cfg.Sampling and cfg.Sample are) and the
// handlers of its requests and notifications.
func (c *Client) clientOptions() *sdk.ClientOptions {
	caps := &sdk.ClientCapabilities{}
	if len(c.cfg.Roots) > 0 {
		caps.RootsV2 = &sdk.RootCapabilities{}
	}
	o := &sdk.ClientOptions{
		Capabilities:                caps,
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { c.signalRefresh() },
		ResourceListChangedHandler:  func(context.Context, *sdk.ResourceListChangedRequest) { c.signalRelist() },
		PromptListChangedHandler:    func(context.Context, *sdk.PromptListChangedRequest) { c.signalRelist() },
		LoggingMessageHandler:       c.serverLog,
		ProgressNotificationHandler: c.progress,
		ResourceUpdatedHandler:      c.resourceUpdated,
	}
	if c.cfg.Elicit != nil {
		o.ElicitationHandler = c.elicit
	}
	if c.cfg.Sampling && c.cfg.Sample != nil {
		o.CreateMessageHandler = c.sample
	}
	return o
}

// addRoots offers cfg.Roots to the server as file:// URIs.
func (c *Client) addRoots(sc *sdk.Client) {
	for _, dir := range c.cfg.Roots {
		abs, err := filepath.Abs(dir)
		if err != nil {
			c.log.Warn().Str("root", dir).Err(err).Msg("mcp: root left out")
			continue
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
		sc.AddRoots(&sdk.Root{URI: u.String(), Name: filepath.Base(abs)})
	}
}

// subscribeLogs asks a server that offers logging for its messages from
// level info up.
func (c *Client) subscribeLogs(ctx context.Context) {
	caps := c.sess.InitializeResult().Capabilities
	if caps == nil || caps.Logging == nil {
		return
	}
	cs, ok := c.sess.(*sdk.ClientSession)
	if !ok {
		return
	}
	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		c.log.Debug().Err(err).Msg("mcp: the server refused logging/setLevel")
	}
}

// logLevels maps the protocol's syslog levels onto zerolog's.
var logLevels = map[sdk.LoggingLevel]zerolog.Level{
	"debug": zerolog.DebugLevel, "info": zerolog.InfoLevel, "notice": zerolog.InfoLevel,
	"warning": zerolog.WarnLevel, "error": zerolog.ErrorLevel, "critical": zerolog.ErrorLevel,
	"alert": zerolog.ErrorLevel, "emergency": zerolog.ErrorLevel,
}

// serverLog writes a server's log message to the logger at the mapped
// level (info for a level it does not know).
func (c *Client) serverLog(_ context.Context, req *sdk.LoggingMessageRequest) {
	p := req.Params
	level, ok := logLevels[p.Level]
	if !ok {
		level = zerolog.InfoLevel
	}
	ev := c.log.WithLevel(level).Str("mcp_level", string(p.Level))
	if p.Logger != "" {
		ev = ev.Str("mcp_logger", p.Logger)
	}
	if s, ok := p.Data.(string); ok {
		ev = ev.Str("data", s)
	} else {
		ev = ev.Interface("data", p.Data)
	}
	ev.Msg("mcp server log")
}

// progress reports a server's progress notification: to the call that
// asked for it (see CallToolProgress), and to the logger at debug
// level.
func (c *Client) progress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	c.log.Debug().Interface("token", p.ProgressToken).Float64("progress", p.Progress).Float64("total", p.Total).
		Str("message", p.Message).Msg("mcp server progress")
	if fn := c.progressFunc(p.ProgressToken); fn != nil {
		fn(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

// Progress is a server's progress notification for one request.
type Progress struct {
	// Progress is how far the request is; it grows with each notification.
	Progress float64
	// Total is the amount of work, when the server knows it (else 0).
	Total float64
	// Message says what the server is doing, when it says.
	Message string
}

// watchProgress registers fn under a new progress token.
func (c *Client) watchProgress(fn func(Progress)) string {
	c.progressMu.Lock()
	defer c.progressMu.Unlock()
	c.progressN++
	token := "agcore-" + strconv.FormatInt(c.progressN, 10)
	if c.progressFn == nil {
		c.progressFn = map[string]func(Progress){}
	}
	c.progressFn[token] = fn
	return token
}

// unwatchProgress forgets a progress token.
func (c *Client) unwatchProgress(token string) {
	c.progressMu.Lock()
	defer c.progressMu.Unlock()
	delete(c.progressFn, token)
}

// progressFunc returns the function registered for token, or nil.
func (c *Client) progressFunc(token any) func(Progress) {
	s, ok := token.(string)
	if !ok {
		return nil
	}
	c.progressMu.Lock()
	defer c.progressMu.Unlock()
	return c.progressFn[s]
}
