package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agcore/agcore/messages"

	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/scripted"
)

func TestDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	code, stdout, stderr := runCLI(t.Context(), t, nil, "demo", "--workspace", dir, "--sessions", "3", "--turns", "2")
	if code != exitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"3 sessions × 2 turns",
		"(embedded mock LLM)",
		"README.md, go.mod, main.go",
		"demo-1   → list_dir {\"path\":\".\"}",
		"demo-3   ✓ read_file ",
		"demo-2   ✓ completed · 4 round trips · 4 tool calls",
		"demo-2   ✓ completed · 8 round trips · 8 tool calls",
		"3 of 3 sessions completed · 24 tool calls",
		"demo-1 answered: Done.",
		"workspace kept at ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^\s*demo-3\s+completed\s+2\s+8\s+8\s+0\s+\d+\s+\S+\s*$`).MatchString(stdout) {
		t.Errorf("summary table lacks the row of demo-3:\n%s", stdout)
	}
	summary, err := os.ReadFile(filepath.Join(dir, "SUMMARY.md"))
	if err != nil || !strings.HasPrefix(string(summary), "# Summary") {
		t.Errorf("SUMMARY.md = %q, %v", summary, err)
	}
}

func TestDemo_JSON(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context(), t, nil, "demo", "--json", "--sessions", "2")
	if code != exitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	counts := map[string]int{}
	for _, l := range lines[:len(lines)-1] {
		ev, err := messages.UnmarshalEvent([]byte(l))
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		counts[ev.EventType()]++
	}
	if counts["turn_started"] != 2 || counts["turn_ended"] != 2 || counts["tool_finished"] != 8 {
		t.Errorf("event counts %v", counts)
	}
	var summary struct {
		Type string
		Data struct {
			Sessions []struct {
				Session   string `json:"session"`
				Outcome   string `json:"outcome"`
				ToolCalls int    `json:"tool_calls"`
			} `json:"sessions"`
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil || summary.Type != "summary" ||
		len(summary.Data.Sessions) != 2 || summary.Data.Sessions[1].Outcome != "completed" || summary.Data.Sessions[1].ToolCalls != 4 {
		t.Errorf("summary line %s (%v)", lines[len(lines)-1], err)
	}
}

// TestDemo_KeepsTheWorkspaceItNames runs the demo in a temporary
// workspace: the workspace it names, and the SUMMARY.md its sessions say
// they wrote there, are still there when it ends, and its last lines say
// so. With --json the summary line names the workspace.
func TestDemo_KeepsTheWorkspaceItNames(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context(), t, nil, "demo")
	if code != exitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	line := stdout[strings.Index(stdout, "\nworkspace ")+len("\nworkspace "):]
	dir := line[:strings.Index(line, ":")]
	if b, err := os.ReadFile(filepath.Join(dir, "SUMMARY.md")); err != nil || !strings.HasPrefix(string(b), "# Summary") {
		t.Errorf("SUMMARY.md in the workspace the demo names: %q, %v", b, err)
	}
	if want := "workspace kept at " + dir + ": README.md, SUMMARY.md, go.mod, main.go\n"; !strings.HasSuffix(stdout, want) {
		t.Errorf("stdout does not end with %q:\n%s", want, stdout)
	}

	code, stdout, stderr = runCLI(t.Context(), t, nil, "demo", "--json", "--sessions", "1")
	if code != exitOK {
		t.Fatalf("--json: exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var summary struct {
		Data struct {
			Workspace string `json:"workspace"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil || summary.Data.Workspace == "" {
		t.Fatalf("summary line %s: %v", lines[len(lines)-1], err)
	}
	if _, err := os.Stat(filepath.Join(summary.Data.Workspace, "SUMMARY.md")); err != nil {
		t.Errorf("SUMMARY.md in the workspace of the summary line: %v", err)
	}
}

// TestDemo_Endpoint runs the demo against an endpoint given by the
// environment, as with a real provider, and checks that the API key is sent
// but never printed or logged, even at debug level.
func TestDemo_Endpoint(t *testing.T) {
	const key = "sk-test-Vq3xTnW4vXy2LmK9pR3s"
	srv, err := mockllm.Start(t.Context(), "127.0.0.1:0", mockllm.Config{
		Provider: scripted.MustNew(scripted.Demo(), scripted.Options{}),
		APIKey:   key,
		Models:   []string{"demo-model"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		want     string
	}{
		{
			"environment", map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": key, "OPENAI_MODEL": "demo-model"},
			nil, exitOK, "model demo-model at " + srv.URL() + "\n",
		},
		{
			"flags", nil, []string{"--base-url", srv.URL(), "--api-key", key, "--model", "demo-model"},
			exitOK, "1 of 1 sessions completed",
		},
		{
			"wrong key", map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-wrong-0123456789abcdef"},
			[]string{"--model", "demo-model"}, exitError, "authentication",
		},
		{
			"unknown model", map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": key},
			nil, exitError, "not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--log-level", "debug", "--log-format", "json", "demo", "--sessions", "1"}, tt.args...)
			code, stdout, stderr := runCLI(t.Context(), t, tt.env, args...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", tt.want, stdout, stderr)
			}
			for _, secret := range []string{key, "Vq3xTnW4vXy2LmK9pR3s", "0123456789abcdef"} {
				if strings.Contains(stdout+stderr, secret) {
					t.Errorf("the API key was printed or logged\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
				}
			}
		})
	}
}

func TestDemo_BadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--max-steps", "0"}, "--max-steps must be at least 1, got 0"},
		{[]string{"--sessions", "0"}, "--sessions must be at least 1, got 0"},
		{[]string{"--sessions", "100000"}, "--sessions must be at most 1000"},
		{[]string{"--turns", "-1"}, "--turns must be at least 1, got -1"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t.Context(), t, nil, append([]string{"demo"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("demo %v: exit code %d, stderr %q; want %d and %q", tt.args, code, stderr, exitUsage, tt.want)
		}
	}
}

// startMockLLM runs `agcore mock-llm args...` in-process until the test
// ends, and returns its base URL.
func startMockLLM(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		defer pw.Close()
		done <- run(ctx, append([]string{"mock-llm", "--addr", "127.0.0.1:0"}, args...), pw, &stderr, func(string) string { return "" })
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("mock-llm exited with %d after cancellation; stderr:\n%s", code, stderr.String())
		}
	})
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		cancel()
		<-done
		t.Fatalf("mock-llm printed nothing; stderr:\n%s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	first := lines.Text()
	const prefix = "mock LLM listening on "
	if !strings.HasPrefix(first, prefix) {
		t.Fatalf("first line %q lacks %q", first, prefix)
	}
	return strings.TrimPrefix(first, prefix)
}

func TestMockLLM(t *testing.T) {
	url := startMockLLM(t)
	resp, err := http.Get(url + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/models: %s, %v", resp.Status, err)
	}
	if len(list.Data) != 1 || list.Data[0].ID != mockllm.DefaultModel {
		t.Errorf("models = %+v, want [%s]", list.Data, mockllm.DefaultModel)
	}

	// The demo talks to it as to any endpoint.
	code, stdout, stderr := runCLI(t.Context(), t, map[string]string{"OPENAI_BASE_URL": url}, "demo", "--model", "scripted")
	if code != exitOK || !strings.Contains(stdout, `→ list_dir {"path":"."}`) || !strings.Contains(stdout, "4 of 4 sessions completed") {
		t.Errorf("demo against mock-llm: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestMockLLM_Script(t *testing.T) {
	script := filepath.Join(t.TempDir(), "hello.yaml")
	if err := os.WriteFile(script, []byte("rules:\n  - match: {any: true}\n    reply: {text: Hello from the script.}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startMockLLM(t, "--script", script)
	code, stdout, stderr := runCLI(t.Context(), t, nil, "demo", "--base-url", url, "--model", "scripted")
	if code != exitOK || !strings.Contains(stdout, "demo-1 answered: Hello from the script.\n") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestMockLLM_Errors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"non-loopback address", []string{"--addr", "0.0.0.0:0"}, "--addr 0.0.0.0:0: mock-llm listens on a loopback address only"},
		{"missing script", []string{"--addr", "127.0.0.1:0", "--script", "does-not-exist.yaml"}, "--script does-not-exist.yaml: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t.Context(), t, nil, append([]string{"mock-llm"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tt.want)
			}
		})
	}
}

// TestDemo_UnreachableEndpoint runs the demo against an address where
// nothing listens: it fails as unavailable with a message that names the
// endpoint, after the 3 attempts of the runtime's retry policy (the only
// retry layer), each logged at debug level by the provider.
func TestDemo_UnreachableEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String() + "/v1"
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t.Context(), t, nil,
		"--log-level", "debug", "--log-format", "json", "demo", "--sessions", "1", "--base-url", base, "--model", "m")
	if code != exitError {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitError, stdout, stderr)
	}
	want := "connection refused: nothing is listening at " + base
	if !strings.Contains(stdout+stderr, want) || !strings.Contains(stdout+stderr, "unavailable") {
		t.Errorf("output lacks %q (unavailable)\nstdout:\n%s\nstderr:\n%s", want, stdout, stderr)
	}
	if n := strings.Count(stderr, `"message":"chat completion"`); n != 3 {
		t.Errorf("attempts logged = %d, want 3\nstderr:\n%s", n, stderr)
	}
}
