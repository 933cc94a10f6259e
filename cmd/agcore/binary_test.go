package main

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// buildBinary builds the agcore command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "agcore")
	if out, err := exec.CommandContext(t.Context(), gobin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// userEnv is the test's environment without the variables that would point
// the demo at a real endpoint.
func userEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	return env
}

// TestBinary builds the command once and runs it as a user would.
func TestBinary(t *testing.T) {
	bin := buildBinary(t)
	t.Run("commands", func(t *testing.T) { testCommands(t, bin) })
	t.Run("mock-llm until SIGTERM", func(t *testing.T) { testMockLLMSignal(t, bin) })
}

// testCommands checks the exit code and output of a few command lines.
func testCommands(t *testing.T, bin string) {
	tests := []struct {
		args     []string
		wantCode int
		want     []string // in stdout and stderr together
	}{
		{[]string{"demo"}, exitOK, []string{`→ list_dir {"path":"."}`, `→ read_file {"path":"go.mod"}`, "SUMMARY.md", "usage: 4 model calls"}},
		{[]string{"version"}, exitOK, []string{"agcore "}},
		{[]string{"--help"}, exitOK, []string{"Available Commands:"}},
		{[]string{"nope"}, exitUsage, []string{`unknown command "nope"`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), bin, tt.args...)
			cmd.Env = userEnv()
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := errors.AsType[*exec.ExitError](err); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d\n%s", code, tt.wantCode, out)
			}
			for _, want := range tt.want {
				if !strings.Contains(string(out), want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// testMockLLMSignal checks that mock-llm serves until SIGTERM and then
// exits cleanly.
func testMockLLMSignal(t *testing.T, bin string) {
	cmd := exec.CommandContext(t.Context(), bin, "mock-llm", "--addr", "127.0.0.1:0")
	cmd.Env = userEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("mock-llm printed nothing; stderr:\n%s", stderr.String())
	}
	url := strings.TrimPrefix(lines.Text(), "mock LLM listening on ")
	resp, err := http.Get(url + "/models")
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s/models: %s", url, resp.Status)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, stdout) // until the process closes it
	if err := cmd.Wait(); err != nil {
		t.Errorf("mock-llm after SIGTERM: %v; stderr:\n%s", err, stderr.String())
	}
}
