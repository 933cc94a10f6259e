package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/builtin"
	"github.com/agcore/agcore/toolsys/mcp"
)

// servedRegistry holds read_file and write_file behind a read-only
// pipeline, with a workspace holding hello.txt.
func servedRegistry(t *testing.T) (*toolsys.Registry, mcp.ServeOptions) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := toolsys.NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
	opts := builtin.Options{}
	reg.MustRegister(toolsys.Bridge[builtin.ReadFileParams](builtin.NewReadFile(opts)))
	reg.MustRegister(toolsys.Bridge[builtin.WriteFileParams](builtin.NewWriteFile(opts)))
	return reg, mcp.ServeOptions{Workspace: ws}
}

// checkServed lists and calls the served tools through an SDK client.
func checkServed(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	ctx := t.Context()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil {
			t.Errorf("tool %s has no input schema", tool.Name)
		}
	}
	if strings.Join(names, ",") != "read_file,write_file" {
		t.Errorf("tools = %v", names)
	}
	tests := []struct {
		name, tool string
		args       map[string]any
		isError    bool
		want       string
	}{
		{"read in workspace", "read_file", map[string]any{"path": "hello.txt"}, false, "hello from the workspace"},
		{"outside the workspace", "read_file", map[string]any{"path": "../../etc/passwd"}, true, ""},
		{"denied by the mode", "write_file", map[string]any{"path": "x.txt", "content": "x"}, true, "permission denied for tool write_file"},
		{"invalid arguments", "read_file", map[string]any{"path": 3}, true, `"path"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tt.tool, Arguments: tt.args})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			got := mcp.ResultFromMCP(res)
			if got.IsError != tt.isError || !strings.Contains(got.Content, tt.want) {
				t.Errorf("result = %+v, want IsError=%v containing %q", got, tt.isError, tt.want)
			}
		})
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "bash"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("calling an unserved tool: %v, want the SDK's unknown tool error", err)
	}
	if _, err := os.Stat("x.txt"); err == nil {
		t.Error("a denied write happened")
	}
}

func TestServe_InMemory(t *testing.T) {
	reg, opts := servedRegistry(t)
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- mcp.Serve(ctx, reg, opts, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkServed(t, cs)
	_ = cs.Close()
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func TestServe_HTTP(t *testing.T) {
	reg, opts := servedRegistry(t)
	const token = "s3cret-token"
	h := mcp.HTTPHandler(reg, opts)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token || r.Header.Get("X-Client") != "agcore-test" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	t.Run("sdk client", func(t *testing.T) {
		tr := &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: authTransport{token}}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		checkServed(t, cs)
	})
	t.Run("agcore client with headers and bearer token", func(t *testing.T) {
		c := connect(t, mcp.ServerConfig{Name: "self", URL: srv.URL, BearerToken: token, Headers: map[string]string{"X-Client": "agcore-test"}})
		res, err := findTool(t, c.Tools(), "mcp__self__read_file").Execute(t.Context(), []byte(`{"path":"hello.txt"}`), nil)
		if err != nil || res.IsError || !strings.Contains(res.Content, "hello from the workspace") {
			t.Errorf("read_file through agcore's client = %+v, %v", res, err)
		}
	})
	t.Run("missing token", func(t *testing.T) {
		_, err := mcp.Connect(t.Context(), mcp.ServerConfig{Name: "self", URL: srv.URL}, mcp.Options{})
		if err == nil {
			t.Fatal("Connect without the token succeeded")
		}
	})
}

type authTransport struct{ token string }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+a.token)
	r.Header.Set("X-Client", "agcore-test")
	return http.DefaultTransport.RoundTrip(r)
}
