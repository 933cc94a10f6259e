package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// text is a one-part text reply.
func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

var echoSchema = json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","title":"Echo",
	"properties":{"message":{"type":"string","description":"what to echo"},"times":{"type":"integer","minimum":1}},
	"required":["message"],"additionalProperties":false}`)

func echoHandler(calls *atomic.Int64) sdk.ToolHandler {
	return func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		calls.Add(1)
		var p struct{ Message string }
		if err := json.Unmarshal(req.Params.Arguments, &p); err != nil {
			return nil, err
		}
		return text("echo: " + p.Message), nil
	}
}

func TestClient_ToolMapping(t *testing.T) {
	var calls atomic.Int64
	m := newInMemory(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes.", InputSchema: echoSchema,
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, echoHandler(&calls))
		s.AddTool(&sdk.Tool{Name: "weird.name/with spaces", Title: "Weird",
			InputSchema: json.RawMessage(`{"type":"object"}`)}, echoHandler(&calls))
	})
	tests := []struct {
		name     string
		cfg      func(mcp.ServerConfig) mcp.ServerConfig
		wantPerm toolsys.Permission
	}{
		{"default permission is execute", func(c mcp.ServerConfig) mcp.ServerConfig { return c }, toolsys.PermExecute},
		{"configured permission", func(c mcp.ServerConfig) mcp.ServerConfig {
			p := toolsys.PermWrite
			c.Permission = &p
			return c
		}, toolsys.PermWrite},
		{"trusted read-only hint", func(c mcp.ServerConfig) mcp.ServerConfig {
			c.TrustReadOnlyHints = true
			return c
		}, toolsys.PermReadOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := connect(t, tt.cfg(m.config("srv")))
			tools := c.Tools()
			names := make([]string, len(tools))
			for i, tool := range tools {
				names[i] = tool.Name()
			}
			want := []string{"mcp__srv__echo", mcp.ToolName("srv", "weird.name/with spaces")}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Fatalf("tool names (-want +got):\n%s", diff)
			}
			echo := findTool(t, tools, "mcp__srv__echo")
			if echo.Permission() != tt.wantPerm {
				t.Errorf("Permission = %v, want %v", echo.Permission(), tt.wantPerm)
			}
			if !echo.Idempotent() {
				t.Error("a read-only-hinted tool should be idempotent")
			}
			wantSchema := `{"additionalProperties":false,"properties":{"message":{"description":"what to echo","type":"string"},"times":{"minimum":1,"type":"integer"}},"required":["message"],"type":"object"}`
			if got := string(echo.Schema()); got != wantSchema {
				t.Errorf("Schema = %s\nwant %s", got, wantSchema)
			}
			res, err := echo.Execute(t.Context(), json.RawMessage(`{"message":"hi"}`), nil)
			if err != nil || res.IsError || res.Content != "echo: hi" {
				t.Errorf("Execute = %+v, %v; want echo: hi", res, err)
			}
			weird := findTool(t, tools, mcp.ToolName("srv", "weird.name/with spaces"))
			if weird.Description() != "Weird" {
				t.Errorf("Description = %q, want the title when there is no description", weird.Description())
			}
		})
	}
}

func TestClient_ArgumentValidation(t *testing.T) {
	var calls atomic.Int64
	m := newInMemory(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "echo", InputSchema: echoSchema}, echoHandler(&calls))
	})
	echo := findTool(t, connect(t, m.config("srv")).Tools(), "mcp__srv__echo")
	tests := []struct {
		name, args, wantIn string
	}{
		{"missing required", `{}`, `"message"`},
		{"wrong type", `{"message":3}`, `"message"`},
		{"below minimum", `{"message":"x","times":0}`, `"times"`},
		{"unknown field", `{"message":"x","colour":"red"}`, `"colour"`},
		{"not an object", `[1]`, "object"},
		{"not JSON", `{"message":`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := echo.Execute(t.Context(), json.RawMessage(tt.args), nil)
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if !res.IsError || !strings.Contains(res.Content, tt.wantIn) || !strings.Contains(res.Content, "mcp__srv__echo") {
				t.Errorf("result = %+v, want an IsError naming %s and the tool", res, tt.wantIn)
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the server received %d calls with invalid arguments, want 0", n)
	}
	// An empty optional is stripped, as for typed tools.
	res, err := echo.Execute(t.Context(), json.RawMessage(`{"message":"ok","times":null}`), nil)
	if err != nil || res.IsError {
		t.Errorf("Execute with a null optional = %+v, %v", res, err)
	}
}

func TestClient_Results(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G'}
	replies := map[string]*sdk.CallToolResult{
		"error_with_text": {IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "disk full"}}},
		"error_bare":      {IsError: true, Content: []sdk.Content{}},
		"two_texts":       {Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}},
		"structured":      {Content: []sdk.Content{}, StructuredContent: map[string]any{"sum": 3}},
		"image":           {Content: []sdk.Content{&sdk.TextContent{Text: "see"}, &sdk.ImageContent{MIMEType: "image/png", Data: png}}},
		"resource":        {Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a", MIMEType: "text/plain", Text: "A"}}}},
	}
	m := newInMemory(t, func(s *sdk.Server) {
		for name, r := range replies {
			s.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return r, nil })
		}
		s.AddTool(&sdk.Tool{Name: "protocol_error", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return nil, errors.New("no such widget")
			})
	})
	c := connect(t, m.config("s"))
	tests := []struct {
		tool string
		want toolsys.Result
	}{
		{"error_with_text", toolsys.Result{Content: "disk full", IsError: true}},
		{"error_bare", toolsys.Result{Content: "the tool reported an error without a message", IsError: true}},
		{"two_texts", toolsys.Result{Content: "a\nb"}},
		{"structured", toolsys.Result{Content: `{"sum":3}`, Metadata: map[string]any{mcp.MetaStructured: map[string]any{"sum": float64(3)}}}},
		{"image", toolsys.Result{Content: "see", Metadata: map[string]any{mcp.MetaImages: []map[string]any{{"mime_type": "image/png", "data": "iVBORw=="}}}}},
		{"resource", toolsys.Result{Content: "[resource file:///a]", Metadata: map[string]any{mcp.MetaResources: []map[string]any{{"uri": "file:///a", "mime_type": "text/plain", "text": "A"}}}}},
		{"protocol_error", toolsys.Result{Content: "tool mcp__s__protocol_error: the server refused the call: no such widget", IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			got, err := findTool(t, c.Tools(), "mcp__s__"+tt.tool).Execute(t.Context(), nil, nil)
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClient_ConcurrentCalls(t *testing.T) {
	const n = 32
	var arrived sync.WaitGroup
	arrived.Add(n)
	release := make(chan struct{})
	go func() { arrived.Wait(); close(release) }()
	m := newInMemory(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "wait", InputSchema: echoSchema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			arrived.Done()
			select {
			case <-release: // every call is in flight at once
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			var p struct{ Message string }
			_ = json.Unmarshal(req.Params.Arguments, &p)
			return text(p.Message), nil
		})
	})
	tool := findTool(t, connect(t, m.config("s")).Tools(), "mcp__s__wait")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			msg := strings.Repeat("x", i+1)
			res, err := tool.Execute(ctx, json.RawMessage(`{"message":"`+msg+`"}`), nil)
			if err == nil && res.Content != msg {
				err = errors.New("wrong reply " + res.Content)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestClient_CancelNotifiesServer(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan error, 1)
	m := newInMemory(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			cancelled <- ctx.Err()
			return nil, ctx.Err()
		})
	})
	tool := findTool(t, connect(t, m.config("s")).Tools(), "mcp__s__block")
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := tool.Execute(ctx, nil, nil)
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Execute error = %v, want context.Canceled", err)
	}
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("server handler ctx error = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server was not told of the cancellation")
	}
}

func TestClient_CallTimeout(t *testing.T) {
	m := newInMemory(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	})
	cfg := m.config("slow")
	cfg.CallTimeout = 10 * time.Millisecond
	_, err := findTool(t, connect(t, cfg).Tools(), "mcp__slow__block").Execute(t.Context(), nil, nil)
	var se *mcp.ServerError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &se) || se.Server != "slow" {
		t.Fatalf("error = %v, want a *ServerError for slow wrapping DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), "timed out after 10ms") {
		t.Errorf("error %q does not say how long it waited", err)
	}
}

func TestClient_ResourcesAndPrompts(t *testing.T) {
	m := newInMemory(t, func(s *sdk.Server) {
		s.AddResource(&sdk.Resource{URI: "test://a", Name: "a", MIMEType: "text/plain"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "content of a"}}}, nil
		})
		s.AddPrompt(&sdk.Prompt{Name: "greet", Arguments: []*sdk.PromptArgument{{Name: "who", Required: true}}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
		})
	})
	cfg := m.config("s")
	cfg.ResourceTools, cfg.PromptTools = true, true
	c := connect(t, cfg)
	if rs := c.Resources(); len(rs) != 1 || rs[0].URI != "test://a" {
		t.Errorf("Resources = %v", rs)
	}
	if ps := c.Prompts(); len(ps) != 1 || ps[0].Name != "greet" {
		t.Errorf("Prompts = %v", ps)
	}
	tests := []struct {
		tool, args, want string
		isError          bool
	}{
		{"list_resources", `{}`, "test://a\ta\ttext/plain\n", false},
		{"read_resource", `{"uri":"test://a"}`, "content of a", false},
		{"read_resource", `{"uri":"test://missing"}`, "reading test://missing", true},
		{"list_prompts", `{}`, "greet [who, required]\n", false},
		{"get_prompt", `{"name":"greet","arguments":{"who":"Ada"}}`, "user: hello Ada\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := findTool(t, c.Tools(), "mcp__s__"+tt.tool).Execute(t.Context(), json.RawMessage(tt.args), nil)
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if res.IsError != tt.isError || !strings.HasPrefix(res.Content, tt.want) {
				t.Errorf("result = %+v, want IsError=%v and content starting %q", res, tt.isError, tt.want)
			}
		})
	}
}

func TestConnect_Failures(t *testing.T) {
	tests := []struct {
		name    string
		cfg     mcp.ServerConfig
		wantErr error
	}{
		{"no name", mcp.ServerConfig{Command: "x"}, mcp.ErrInvalidConfig},
		{"two transports", mcp.ServerConfig{Name: "a", Command: "x", URL: "http://127.0.0.1:1/mcp"}, mcp.ErrInvalidConfig},
		{"bad url", mcp.ServerConfig{Name: "a", URL: "ftp://x"}, mcp.ErrInvalidConfig},
		{"missing command", mcp.ServerConfig{Name: "a", Command: "/nonexistent/agcore-mcp-server"}, mcp.ErrServerUnavailable},
		{"command exits", mcp.ServerConfig{Name: "a", Command: "sh", Args: []string{"-c", "echo boom >&2; exit 3"}}, mcp.ErrServerUnavailable},
		{"transport fails", mcp.ServerConfig{Name: "a", Transport: func(context.Context) (sdk.Transport, error) {
			return nil, errors.New("no route")
		}}, mcp.ErrServerUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mcp.Connect(t.Context(), tt.cfg, mcp.Options{})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Connect error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == mcp.ErrServerUnavailable && !strings.Contains(err.Error(), "mcp server a") {
				t.Errorf("error %q does not name the server", err)
			}
		})
	}
}

func TestConnect_StderrInError(t *testing.T) {
	_, err := mcp.Connect(t.Context(), mcp.ServerConfig{Name: "a", Command: "sh", Args: []string{"-c", "echo boom >&2; exit 3"}}, mcp.Options{})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("error = %v, want the server's stderr", err)
	}
}

// TestClient_DiedThenClosed closes a client whose server has died, as its
// connection actor does, and checks that the failure is still reported as
// the server's (ErrServerUnavailable), not as a close by the caller.
func TestClient_DiedThenClosed(t *testing.T) {
	m := newInMemory(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "noop", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	})
	c, err := mcp.Connect(t.Context(), m.config("dies"), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.kill()
	<-c.Done()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Err":      c.Err(),
		"CallTool": func() error { _, err := c.CallTool(t.Context(), "noop", nil); return err }(),
	} {
		if !errors.Is(err, mcp.ErrServerUnavailable) || errors.Is(err, mcp.ErrClosed) {
			t.Errorf("%s = %v, want ErrServerUnavailable and not ErrClosed", name, err)
		}
	}

	c2, err := mcp.Connect(t.Context(), m.config("closed"), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = c2.Close()
	if _, err := c2.CallTool(t.Context(), "noop", nil); !errors.Is(err, mcp.ErrClosed) {
		t.Errorf("CallTool after Close = %v, want ErrClosed", err)
	}
}
