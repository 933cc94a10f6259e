package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// echoParams are the arguments of the test MCP server's echo tool.
type echoParams struct {
	Text string `json:"text"`
}

// echoTool answers with its text, upper-cased, and counts its calls.
type echoTool struct{ calls *atomic.Int64 }

func (echoTool) Name() string                   { return "echo" }
func (echoTool) Description() string            { return "Echo the text, upper-cased." }
func (echoTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (echoTool) SecretParams() []string         { return nil }
func (e echoTool) Execute(_ context.Context, p echoParams, _ *toolsys.Context) (toolsys.Result, error) {
	e.calls.Add(1)
	return toolsys.Result{Content: "ECHO " + strings.ToUpper(p.Text)}, nil
}

// startEchoMCP serves the echo tool over Streamable HTTP on 127.0.0.1 and
// returns its URL and the count of its calls. The server is slow to start,
// as a server run through npx is: its first answer takes 300 ms.
func startEchoMCP(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	calls := &atomic.Int64{}
	reg := toolsys.NewRegistry(toolsys.Config{})
	if err := toolsys.RegisterTyped[echoParams](reg, echoTool{calls: calls}); err != nil {
		t.Fatal(err)
	}
	h := mcp.HTTPHandler(reg, mcp.ServeOptions{})
	var started atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !started.Swap(true) {
			time.Sleep(300 * time.Millisecond) // the server's start-up, not a wait for the test
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, calls
}

// echoScript calls the echo tool in the model's first reply, then reports
// what it returned.
const echoScript = `rules:
  - match: {role: user}
    reply:
      tool_calls:
        - name: mcp__remote__echo
          arguments: {text: hello}
  - match: {tool: mcp__remote__echo}
    reply: {text: "The server said so."}
`

// mcpConfig returns a configuration whose model plays echoScript, with the
// MCP servers of servers (YAML list items).
func mcpConfig(t *testing.T, servers string) string {
	t.Helper()
	return writeConfig(t, "data_dir: data\nworkspace: .\ndefault_model: mock/scripted\n"+
		"providers:\n  - {name: mock, type: scripted, script: echo.yaml}\n"+
		"mcp_servers:\n"+servers, map[string]string{"echo.yaml": echoScript})
}

// TestRun_MCPServerFromConfig runs one turn whose first reply calls the
// tool of an MCP server from the configuration: the server is connected
// before the turn starts, so the call reaches it.
func TestRun_MCPServerFromConfig(t *testing.T) {
	url, calls := startEchoMCP(t)
	cfg := mcpConfig(t, fmt.Sprintf("  - {name: remote, url: %q, permission: read-only}\n", url))
	for _, args := range [][]string{{"run", "say hello"}, {"run", "--json", "say hello"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			before := calls.Load()
			code, stdout, stderr := runCLI(t.Context(), t, nil, append([]string{"--config", cfg}, args...)...)
			if code != exitOK {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitOK, stdout, stderr)
			}
			if got := calls.Load() - before; got != 1 {
				t.Errorf("the MCP server's tool ran %d times, want 1\nstdout:\n%s\nstderr:\n%s", got, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "unknown tool") || !strings.Contains(stdout, "The server said so.") {
				t.Errorf("the turn did not use the tool's result\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
}

// TestChat_MCPServerFromConfig types the first line at once: the server's
// tool is there for it.
func TestChat_MCPServerFromConfig(t *testing.T) {
	url, calls := startEchoMCP(t)
	cfg := mcpConfig(t, fmt.Sprintf("  - {name: remote, url: %q, permission: read-only}\n", url))
	code, stdout, stderr := runCLIInput(t.Context(), t, nil, "say hello\n", "--config", cfg, "chat")
	if code != exitOK || calls.Load() != 1 || !strings.Contains(stdout, "The server said so.") {
		t.Errorf("exit code %d, %d calls of the tool, want %d and 1\nstdout:\n%s\nstderr:\n%s", code, calls.Load(), exitOK, stdout, stderr)
	}
}

// runCLISync is runCLI with outputs safe for concurrent writes: the
// runtime's logger and the command both write to standard error, from
// their own goroutines, as they do to a process's stderr.
func runCLISync(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	code := runIO(t.Context(), args, strings.NewReader(""), &stdout, &stderr, testEnv(t, nil))
	return code, stdout.String(), stderr.String()
}

// TestRun_MCPServerFailing starts a turn with a server that cannot start:
// a warning names the server and the reason, and the turn runs without its
// tools; a required server stops the command instead.
func TestRun_MCPServerFailing(t *testing.T) {
	missing := t.TempDir() + "/no-such-server"
	t.Run("optional", func(t *testing.T) {
		cfg := mcpConfig(t, fmt.Sprintf("  - {name: remote, command: %q, startup_timeout: 300ms}\n", missing))
		code, stdout, stderr := runCLISync(t, "--config", cfg, "run", "say hello")
		if !strings.Contains(stderr, "mcp server remote is not ready after 300ms") || !strings.Contains(stderr, "no-such-server") ||
			!strings.Contains(stderr, "its tools are left out") {
			t.Errorf("stderr does not warn about the server and why\nstderr:\n%s", stderr)
		}
		// The turn ran: the model's call of the missing tool is answered.
		if code != exitOK || !strings.Contains(stdout+stderr, "mcp__remote__echo") {
			t.Errorf("exit code %d, want %d with the turn played\nstdout:\n%s\nstderr:\n%s", code, exitOK, stdout, stderr)

		}
	})
	t.Run("required", func(t *testing.T) {
		cfg := mcpConfig(t, fmt.Sprintf("  - {name: remote, command: %q, startup_timeout: 300ms, required: true}\n", missing))
		code, stdout, stderr := runCLISync(t, "--config", cfg, "run", "say hello")
		if code != exitError || !strings.Contains(stderr, "mcp server remote is not ready after 300ms") ||
			!strings.Contains(stderr, "mcp_servers[0].required") || strings.Contains(stdout, "mcp__remote__echo") {
			t.Errorf("exit code %d, want %d and an error naming the server and the key\nstdout:\n%s\nstderr:\n%s", code, exitError, stdout, stderr)
		}
	})
}

// TestTools_ListsMCPServerTools lists and describes the tools of an MCP
// server from the configuration.
func TestTools_ListsMCPServerTools(t *testing.T) {
	url, _ := startEchoMCP(t)
	cfg := mcpConfig(t, fmt.Sprintf("  - {name: remote, url: %q, permission: read-only}\n", url))
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "tools", "list")
	if code != exitOK || !strings.Contains(stdout, "mcp__remote__echo") || !strings.Contains(stdout, "mcp__remote__echo  mcp") {
		t.Errorf("tools list: exit code %d, want the server's tool with source mcp\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t.Context(), t, nil, "--config", cfg, "tools", "schema", "mcp__remote__echo")
	if code != exitOK || !strings.Contains(stdout, `"text"`) || !strings.Contains(stdout, "upper-cased") {
		t.Errorf("tools schema: exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	bad := mcpConfig(t, fmt.Sprintf("  - {name: remote, command: %q, startup_timeout: 200ms}\n", t.TempDir()+"/nothing"))
	code, stdout, stderr = runCLISync(t, "--config", bad, "tools", "list")
	if code != exitOK || !strings.Contains(stderr, "mcp server remote is not ready after 200ms") || !strings.Contains(stdout, "read_file") {
		t.Errorf("tools list with a failing server: exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestServe_MCPServerFromConfig serves a configuration with a slow MCP
// server: the first turn over the API calls its tool.
func TestServe_MCPServerFromConfig(t *testing.T) {
	url, calls := startEchoMCP(t)
	path := mcpConfig(t, fmt.Sprintf("  - {name: remote, url: %q, permission: read-only}\n", url))
	a := &app{stderr: io.Discard, getenv: func(string) string { return "" }, log: zerolog.Nop(), configPath: path}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	api, _, done := startServeApp(t, ctx, a)
	if code, body := request(t, "POST", api+"/v1/sessions", "", `{"id":"s1"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body := request(t, "POST", api+"/v1/sessions/s1/turns", "", `{"input":"say hello"}`)
	if code != http.StatusOK || calls.Load() != 1 || !strings.Contains(body, "The server said so.") {
		t.Errorf("turn: %d %s; the MCP tool ran %d times, want 1", code, body, calls.Load())
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
}
