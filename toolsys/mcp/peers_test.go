package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testpeers"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// peerServer returns the stdio config of an installed npm server. Without
// node or the servers, the test skips (or fails under
// AGCORE_REQUIRE_PEERS, as in continuous integration).
func peerServer(t *testing.T, name, bin string, args ...string) mcp.ServerConfig {
	t.Helper()
	node, path := testpeers.MCPServer(t, bin)
	return mcp.ServerConfig{Name: name, Command: node, Args: append([]string{path}, args...)}
}

func callTool(t *testing.T, reg *toolsys.Registry, name, args string) toolsys.Result {
	t.Helper()
	res, err := reg.Call(t.Context(), name, json.RawMessage(args), nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func registryOf(t *testing.T, c *mcp.Client) *toolsys.Registry {
	reg := runAllRegistry(t)
	for _, tool := range c.Tools() {
		reg.MustRegister(tool)
	}
	return reg
}

func TestEverything_Stdio(t *testing.T) {
	cfg := peerServer(t, "everything", "mcp-server-everything")
	cfg.ResourceTools, cfg.PromptTools = true, true
	c := connect(t, cfg)
	if c.PID() == 0 {
		t.Error("PID = 0 for a stdio server")
	}
	reg := registryOf(t, c)
	for _, name := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__trigger-long-running-operation"} {
		if _, ok := reg.Get(name); !ok {
			t.Errorf("tool %s missing; have %v", name, reg.Names())
		}
	}
	t.Run("tools", func(t *testing.T) {
		tests := []struct{ tool, args, want string }{
			{"echo", `{"message":"hello"}`, "Echo: hello"},
			{"get-sum", `{"a":2,"b":3}`, "The sum of 2 and 3 is 5."},
		}
		for _, tt := range tests {
			res := callTool(t, reg, "mcp__everything__"+tt.tool, tt.args)
			if res.IsError || res.Content != tt.want {
				t.Errorf("%s = %+v, want %q", tt.tool, res, tt.want)
			}
		}
		res := callTool(t, reg, "mcp__everything__get-sum", `{"a":"two","b":3}`)
		if !res.IsError || !strings.Contains(res.Content, `"a"`) {
			t.Errorf("get-sum with a string = %+v, want an IsError naming a", res)
		}
		res = callTool(t, reg, "mcp__everything__get-tiny-image", `{}`)
		if imgs, _ := res.Metadata[mcp.MetaImages].([]map[string]any); res.IsError || len(imgs) != 1 || imgs[0]["mime_type"] != "image/png" {
			t.Errorf("get-tiny-image = %+v, want one PNG in metadata", res)
		}
		res = callTool(t, reg, "mcp__everything__get-structured-content", `{"location":"New York"}`)
		if res.IsError || res.Metadata[mcp.MetaStructured] == nil {
			t.Errorf("get-structured-content = %+v, want structured content in metadata", res)
		}
	})
	t.Run("long-running operation cancelled", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := reg.Call(ctx, "mcp__everything__trigger-long-running-operation", json.RawMessage(`{"duration":30,"steps":30}`), nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error = %v, want the caller's deadline", err)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("the cancelled call took %v, the whole operation", took)
		}
		// The session is still usable.
		if res := callTool(t, reg, "mcp__everything__echo", `{"message":"after"}`); res.Content != "Echo: after" {
			t.Errorf("echo after cancellation = %+v", res)
		}
	})
	t.Run("resources", func(t *testing.T) {
		rs := c.Resources()
		if len(rs) == 0 {
			t.Fatal("no resources listed")
		}
		got, err := c.ReadResource(t.Context(), rs[0].URI)
		if err != nil || len(got.Contents) == 0 {
			t.Fatalf("ReadResource(%s) = %v, %v", rs[0].URI, got, err)
		}
		res := callTool(t, reg, "mcp__everything__read_resource", fmt.Sprintf(`{"uri":%q}`, rs[0].URI))
		if res.IsError || res.Content == "" {
			t.Errorf("read_resource = %+v", res)
		}
		res = callTool(t, reg, "mcp__everything__read_resource", `{"uri":"demo://resource/nope"}`)
		if !res.IsError {
			t.Errorf("read_resource of an unknown URI = %+v, want IsError", res)
		}
	})
	t.Run("prompts", func(t *testing.T) {
		names := map[string]bool{}
		for _, p := range c.Prompts() {
			names[p.Name] = true
		}
		if !names["simple-prompt"] || !names["args-prompt"] {
			t.Fatalf("prompts = %v", names)
		}
		res := callTool(t, reg, "mcp__everything__get_prompt", `{"name":"args-prompt","arguments":{"city":"Paris"}}`)
		if res.IsError || !strings.Contains(res.Content, "What's weather in Paris?") {
			t.Errorf("get_prompt = %+v", res)
		}
		res = callTool(t, reg, "mcp__everything__get_prompt", `{"name":"simple-prompt"}`)
		if res.IsError || !strings.Contains(res.Content, "This is a simple prompt without arguments.") {
			t.Errorf("get_prompt simple = %+v", res)
		}
	})
}

func TestEverything_StreamableHTTP(t *testing.T) {
	cfg := peerServer(t, "everything", "mcp-server-everything")
	shim, err := filepath.Abs(testpeers.MCPFile(t, "loopback.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cfg.Command, append([]string{"--require", shim}, append(cfg.Args, "streamableHttp")...)...)
	cmd.Env = append(os.Environ(), "PORT=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "AGCORE_LISTENING "); ok {
				port <- p
			}
		}
	}()
	var url string
	select {
	case p := <-port:
		url = "http://127.0.0.1:" + p + "/mcp"
	case <-time.After(30 * time.Second):
		t.Fatal("the HTTP server did not announce its port")
	}
	c := connect(t, mcp.ServerConfig{Name: "everything_http", URL: url, Headers: map[string]string{"X-Agcore-Test": "1"}})
	reg := registryOf(t, c)
	if res := callTool(t, reg, "mcp__everything_http__get-sum", `{"a":20,"b":22}`); res.IsError || res.Content != "The sum of 20 and 22 is 42." {
		t.Errorf("get-sum over HTTP = %+v", res)
	}
	if len(c.Resources()) == 0 || len(c.Prompts()) == 0 {
		t.Error("resources or prompts missing over HTTP")
	}
}

func TestFilesystem(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := connect(t, peerServer(t, "fs", "mcp-server-filesystem", dir))
	reg := registryOf(t, c)
	// The server resolves symlinks (macOS /var -> /private/var), so use
	// the real path.
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(real, "notes.txt")
	res := callTool(t, reg, "mcp__fs__write_file", fmt.Sprintf(`{"path":%q,"content":"line one\nline two"}`, file))
	if res.IsError {
		t.Fatalf("write_file = %+v", res)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "line one\nline two" {
		t.Fatalf("file on disk = %q, %v", b, err)
	}
	res = callTool(t, reg, "mcp__fs__read_text_file", fmt.Sprintf(`{"path":%q}`, file))
	if res.IsError || res.Content != "line one\nline two" {
		t.Errorf("read_text_file = %+v", res)
	}
	for _, tt := range []struct{ tool, args string }{
		{"read_text_file", fmt.Sprintf(`{"path":%q}`, outside)},
		{"write_file", fmt.Sprintf(`{"path":%q,"content":"x"}`, filepath.Join(filepath.Dir(outside), "new.txt"))},
		{"read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(real, "..", filepath.Base(filepath.Dir(outside)), "secret.txt"))},
	} {
		res := callTool(t, reg, "mcp__fs__"+tt.tool, tt.args)
		if !res.IsError || !strings.Contains(res.Content, "Access denied") {
			t.Errorf("%s %s = %+v, want an IsError refusal", tt.tool, tt.args, res)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(outside), "new.txt")); err == nil {
		t.Error("a file was written outside the allowed directory")
	}
}

func TestConn_KillServerDuringCall(t *testing.T) {
	cfg := peerServer(t, "everything", "mcp-server-everything")
	conn, err := mcp.NewConn(cfg, mcp.ConnOptions{Backoff: mcp.Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	reg := runAllRegistry(t)
	conn.Bind(reg)
	conn.Start(t.Context())
	defer conn.Close()
	if err := conn.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	pid := conn.Status().PID
	if pid == 0 {
		t.Fatal("no PID")
	}
	errc := make(chan error, 1)
	go func() {
		_, err := reg.Call(t.Context(), "mcp__everything__trigger-long-running-operation", json.RawMessage(`{"duration":30,"steps":30}`), nil)
		errc <- err
	}()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		var se *mcp.ServerError
		if !errors.Is(err, mcp.ErrServerUnavailable) || !errors.As(err, &se) || se.Server != "everything" {
			t.Fatalf("call error = %v, want a *ServerError for everything wrapping ErrServerUnavailable", err)
		}
		t.Logf("the call failed with: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not fail when its server was killed")
	}
	st := waitFor(t, conn, "reconnection", func(s mcp.Status) bool { return s.State == mcp.StateReady && s.Connects == 2 })
	if st.PID == pid || st.PID == 0 {
		t.Errorf("PID after reconnection = %d (was %d)", st.PID, pid)
	}
	if res := callTool(t, reg, "mcp__everything__echo", `{"message":"back"}`); res.IsError || res.Content != "Echo: back" {
		t.Errorf("call after reconnection = %+v", res)
	}
}
