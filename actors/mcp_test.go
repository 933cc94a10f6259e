package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/testpeers"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/supervisor"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// memServer serves an MCP SDK server in process: every connection attempt
// gets a fresh pair of in-memory transports.
type memServer struct {
	server *sdk.Server

	mu       sync.Mutex
	sessions []*sdk.ServerSession
}

func newMemServer(t *testing.T, setup func(*sdk.Server)) *memServer {
	t.Helper()
	return newMemServerWith(t, nil, setup)
}

// newMemServerWith is newMemServer with server options.
func newMemServerWith(t *testing.T, opts *sdk.ServerOptions, setup func(*sdk.Server)) *memServer {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "test-server", Version: "1"}, opts)
	setup(s)
	m := &memServer{server: s}
	t.Cleanup(m.closeSessions)
	return m
}

// closeSessions closes every server session.
func (m *memServer) closeSessions() {
	m.mu.Lock()
	ss := m.sessions
	m.sessions = nil
	m.mu.Unlock()
	for _, s := range ss {
		_ = s.Close()
	}
}

// config returns a ServerConfig named name that reaches m.
func (m *memServer) config(name string) mcp.ServerConfig {
	return mcp.ServerConfig{Name: name, Transport: func(ctx context.Context) (sdk.Transport, error) {
		st, ct := sdk.NewInMemoryTransports()
		ss, err := m.server.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		m.sessions = append(m.sessions, ss)
		m.mu.Unlock()
		return ct, nil
	}}
}

var messageSchema = json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)

func echoHandler(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var p struct{ Message string }
	if err := json.Unmarshal(req.Params.Arguments, &p); err != nil {
		return nil, err
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + p.Message}}}, nil
}

// waitMCP waits until server is connected.
func waitMCP(t *testing.T, rt *actors.Runtime, server string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := rt.MCP(server).Ready(ctx); err != nil {
		t.Fatalf("MCP(%s).Ready: %v; status %+v", server, err, rt.MCP(server).Status())
	}
}

func TestMCP_SessionCallsRemoteTool(t *testing.T) {
	m := newMemServer(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes.", InputSchema: messageSchema}, echoHandler)
	})
	tests := []struct {
		name      string
		ownTools  bool // Config.Tools is nil: the runtime keeps its own registry
		wantLocal bool
	}{
		{"into the configured registry", false, true},
		{"into the runtime's own registry", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := toolScript("relayed", scripted.ToolCall{Name: "mcp__mem__echo", Arguments: `{"message":"hi"}`})
			var reg *toolsys.Registry
			f := newFixture(t, script, []toolsys.Tool{echoTool("local")}, func(c *actors.Config) {
				c.MCPServers = []mcp.ServerConfig{m.config("mem")}
				if tt.ownTools {
					// The runtime's own registry has the fail-closed
					// default permissions: an approver lets the call run.
					c.Tools = nil
					c.Approver = toolsys.ApproverFunc(func(context.Context, toolsys.ApprovalRequest) (toolsys.Approval, error) {
						return toolsys.Approval{Allow: true}, nil
					})
				}
				reg, _ = c.Tools.(*toolsys.Registry)
			})
			waitMCP(t, f.rt, "mem")
			res, err := f.sess.Submit(t.Context(), messages.UserText("relay hi"))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].IsError || res.ToolCalls[0].Content != "echo: hi" || res.Text != "relayed" {
				t.Fatalf("result = %+v", res)
			}
			st := f.rt.MCP("mem").Status()
			if st.Name != "mem" || st.State != mcp.StateReady || st.Tools != 1 || st.Connects != 1 || st.Err != nil {
				t.Errorf("MCP(mem).Status() = %+v", st)
			}
			if reg != nil {
				if _, ok := reg.Get("mcp__mem__echo"); !ok {
					t.Error("the remote tool is not in the configured registry")
				}
				if _, ok := reg.Get("local"); ok != tt.wantLocal {
					t.Errorf("local tool registered = %v, want %v", ok, tt.wantLocal)
				}
			}
		})
	}
}

func TestMCP_CancelTurnCancelsRemoteCall(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan error, 1)
	m := newMemServer(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			cancelled <- ctx.Err()
			return nil, ctx.Err()
		})
	})
	f := newFixture(t, toolScript("unreachable", scripted.ToolCall{Name: "mcp__mem__block", Arguments: `{}`}), nil, func(c *actors.Config) {
		c.MCPServers = []mcp.ServerConfig{m.config("mem")}
	})
	waitMCP(t, f.rt, "mem")
	ended := make(chan *actors.TurnResult, 1)
	go func() {
		res, _ := f.sess.Submit(context.Background(), messages.UserText("block"))
		ended <- res
	}()
	<-started
	if ok, err := f.sess.Cancel(t.Context()); err != nil || !ok {
		t.Fatalf("Cancel = %v, %v", ok, err)
	}
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("server-side handler ended with %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server-side handler was not cancelled")
	}
	if res := <-ended; res == nil || res.Outcome != messages.OutcomeCancelled {
		t.Errorf("turn result = %+v, want cancelled", res)
	}
}

// recordingClock is a supervisor.Clock that fires every timer at once and
// records the delays asked for.
type recordingClock struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (c *recordingClock) Now() time.Time { return time.Now() }

func (c *recordingClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	c.delays = append(c.delays, d)
	c.mu.Unlock()
	go f()
	return func() bool { return false }
}

func (c *recordingClock) recorded() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.delays...)
}

var _ supervisor.Clock = (*recordingClock)(nil)

func TestMCP_ServerThatNeverComesUpIsReported(t *testing.T) {
	var attempts atomic.Int64
	cfg := mcp.ServerConfig{Name: "down", Transport: func(context.Context) (sdk.Transport, error) {
		attempts.Add(1)
		return nil, errors.New("connection refused by test")
	}}
	clock := &recordingClock{}
	prov := scripted.MustNew(textScript("x"), scripted.Options{})
	rt, err := actors.NewInMemory(actors.Config{Provider: prov, MCPServers: []mcp.ServerConfig{cfg}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err = rt.MCP("down").Ready(ctx)
	if !errors.Is(err, mcp.ErrGaveUp) || !strings.Contains(err.Error(), "connection refused by test") {
		t.Fatalf("MCP(down).Ready = %v, want the reason the runtime gave up", err)
	}
	st := rt.MCP("down").Status()
	if st.State != mcp.StateFailed || st.Err == nil || !strings.Contains(st.Err.Error(), "connection refused by test") || st.Tools != 0 {
		t.Errorf("MCP(down).Status() = %+v", st)
	}
	if _, err := rt.MCP("down").Resources(ctx); !errors.Is(err, mcp.ErrServerUnavailable) || !errors.Is(err, mcp.ErrGaveUp) {
		t.Errorf("Resources on a failed server = %v, want ErrServerUnavailable wrapping the reason", err)
	}
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// The connection backed off exponentially between its attempts and
	// stopped after mcp.DefaultMaxFailures; the actor was not restarted.
	if n := attempts.Load(); n != mcp.DefaultMaxFailures {
		t.Errorf("connection attempts = %d, want %d", n, mcp.DefaultMaxFailures)
	}
	delays := clock.recorded()
	if len(delays) != mcp.DefaultMaxFailures-1 {
		t.Fatalf("backoff delays = %v, want %d", delays, mcp.DefaultMaxFailures-1)
	}
	base := 500 * time.Millisecond
	for i, d := range delays {
		if d < base || d > base+base/5 {
			t.Errorf("delay %d = %v, want %v plus at most 20%% jitter", i+1, d, base)
		}
		base *= 2
	}
}

func TestMCP_ResourcesAndPrompts(t *testing.T) {
	m := newMemServer(t, func(s *sdk.Server) {
		s.AddResource(&sdk.Resource{URI: "test://a", Name: "a", MIMEType: "text/plain"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "content of a"}}}, nil
		})
		s.AddPrompt(&sdk.Prompt{Name: "greet", Arguments: []*sdk.PromptArgument{{Name: "who", Required: true}}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
		})
	})
	f := newFixture(t, textScript("x"), nil, func(c *actors.Config) {
		c.MCPServers = []mcp.ServerConfig{m.config("mem")}
	})
	waitMCP(t, f.rt, "mem")
	ctx := t.Context()
	tests := []struct {
		name string
		call func() (string, error)
		want string
	}{
		{"list resources", func() (string, error) {
			rs, err := f.rt.MCP("mem").Resources(ctx)
			if err != nil || len(rs) != 1 {
				return "", errors.Join(err, errors.New("want one resource"))
			}
			return rs[0].URI, nil
		}, "test://a"},
		{"read resource", func() (string, error) {
			res, err := f.rt.MCP("mem").ReadResource(ctx, "test://a")
			if err != nil || len(res.Contents) != 1 {
				return "", errors.Join(err, errors.New("want one content"))
			}
			return res.Contents[0].Text, nil
		}, "content of a"},
		{"list prompts", func() (string, error) {
			ps, err := f.rt.MCP("mem").Prompts(ctx)
			if err != nil || len(ps) != 1 {
				return "", errors.Join(err, errors.New("want one prompt"))
			}
			return ps[0].Name, nil
		}, "greet"},
		{"get prompt", func() (string, error) {
			res, err := f.rt.MCP("mem").GetPrompt(ctx, "greet", map[string]string{"who": "Ada"})
			if err != nil || len(res.Messages) != 1 {
				return "", errors.Join(err, errors.New("want one message"))
			}
			return res.Messages[0].Content.(*sdk.TextContent).Text, nil
		}, "hello Ada"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := f.rt.MCP("nope").Resources(ctx); !errors.Is(err, actors.ErrUnknownMCPServer) {
		t.Errorf("unknown server: err = %v, want ErrUnknownMCPServer", err)
	}
	if _, err := f.rt.MCP("mem").ReadResource(ctx, "test://missing"); err == nil {
		t.Error("reading a missing resource succeeded")
	}
}

func TestMCP_ConfigErrors(t *testing.T) {
	prov := scripted.MustNew(textScript("x"), scripted.Options{})
	transport := func(context.Context) (sdk.Transport, error) { return nil, errors.New("unused") }
	view := toolsys.NewRegistry(toolsys.Config{}).View(nil)
	tests := []struct {
		name string
		cfg  actors.Config
		want string
	}{
		{"invalid server", actors.Config{Provider: prov, MCPServers: []mcp.ServerConfig{{Name: "bad name"}}}, "MCPServers[0]"},
		{"duplicate server", actors.Config{Provider: prov, MCPServers: []mcp.ServerConfig{
			{Name: "a", Transport: transport}, {Name: "a", Transport: transport}}}, "duplicate server name"},
		{"tools without a registry", actors.Config{Provider: prov, Tools: view,
			MCPServers: []mcp.ServerConfig{{Name: "a", Transport: transport}}}, "*toolsys.Registry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := actors.NewInMemory(tt.cfg)
			if err == nil {
				_ = rt.Shutdown(context.Background())
				t.Fatal("NewInMemory succeeded")
			}
			if !errors.Is(err, actors.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrConfig mentioning %q", err, tt.want)
			}
		})
	}
}

// TestMCP_Everything runs a turn against the npm server-everything over
// stdio, installed by scripts/test.sh.
func TestMCP_Everything(t *testing.T) {
	node, bin := testpeers.MCPServer(t, "mcp-server-everything")
	script := toolScript("done", scripted.ToolCall{Name: "mcp__everything__get-sum", Arguments: `{"a":2,"b":3}`})
	f := newFixture(t, script, nil, func(c *actors.Config) {
		c.MCPServers = []mcp.ServerConfig{{Name: "everything", Command: node, Args: []string{bin}}}
	})
	waitMCP(t, f.rt, "everything")
	res, err := f.sess.Submit(t.Context(), messages.UserText("add 2 and 3"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].IsError || res.ToolCalls[0].Content != "The sum of 2 and 3 is 5." {
		t.Fatalf("tool calls = %+v", res.ToolCalls)
	}
	st := f.rt.MCP("everything").Status()
	if st.PID == 0 || st.State != mcp.StateReady {
		t.Errorf("status = %+v, want a ready stdio server with a PID", st)
	}
	rs, err := f.rt.MCP("everything").Resources(t.Context())
	if err != nil || len(rs) == 0 {
		t.Errorf("Resources = %d resources, %v", len(rs), err)
	}
}

// TestMCP_ToolSetFollowsTheRegistry starts a turn while the server is not
// connected yet: its tool is not offered to the model. Once the server is
// up, the next model request of the same session offers it and the call
// reaches the server.
func TestMCP_ToolSetFollowsTheRegistry(t *testing.T) {
	m := newMemServer(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes.", InputSchema: messageSchema}, echoHandler)
	})
	gate := make(chan struct{})
	cfg := m.config("mem")
	connect := cfg.Transport
	cfg.Transport = func(ctx context.Context) (sdk.Transport, error) {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return connect(ctx)
	}
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "first"}, Reply: scripted.Reply{Text: "no tools yet"}},
		toolScript("relayed", scripted.ToolCall{Name: "mcp__mem__echo", Arguments: `{"message":"hi"}`}).Rules[0],
		toolScript("relayed").Rules[1],
	}}
	var mu sync.Mutex
	var offered [][]string
	f := newFixture(t, script, nil, func(c *actors.Config) {
		c.MCPServers = []mcp.ServerConfig{cfg}
		c.Hooks.Register(actors.PreRequest, actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
			var names []string
			for _, d := range hc.Request.Tools {
				names = append(names, d.Name)
			}
			mu.Lock()
			offered = append(offered, names)
			mu.Unlock()
			return actors.HookResult{}
		}))
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("first")); err != nil {
		t.Fatal(err)
	}
	close(gate)
	waitMCP(t, f.rt, "mem")
	res, err := f.sess.Submit(t.Context(), messages.UserText("relay hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].IsError || res.ToolCalls[0].Content != "echo: hi" {
		t.Fatalf("result = %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offered) < 2 || slices.Contains(offered[0], "mcp__mem__echo") || !slices.Contains(offered[1], "mcp__mem__echo") {
		t.Errorf("tools offered per request = %v, want mcp__mem__echo from the second request on", offered)
	}
}
