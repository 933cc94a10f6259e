package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolsList_ShowsSource lists the built-in tools and a WASM tool of
// the data directory's tool folder: the SOURCE column and the JSON source
// field say where each comes from, and a file that does not load is named
// below the table.
func TestToolsList_ShowsSource(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the Go toolchain is not on PATH: the WASM test tool cannot be built")
	}
	data := t.TempDir()
	tools := filepath.Join(data, "tools")
	build := exec.Command(goBin, "build", "-trimpath", "-o", filepath.Join(tools, "codec.wasm"),
		filepath.Join("..", "..", "toolsys", "wasm", "testdata", "tools", "codec"))
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the codec tool: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(tools, "junk.wasm"), []byte("not wasm"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())

	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", data, "tools", "list")
	if code != exitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	if fields := strings.Fields(lineOf(stdout, "NAME")); len(fields) < 2 || fields[1] != "SOURCE" {
		t.Errorf("header %v, want SOURCE second", fields)
	}
	for name, source := range map[string]string{"codec": "wasm", "read_file": "builtin", "bash": "builtin"} {
		if fields := strings.Fields(lineOf(stdout, name+" ")); len(fields) < 2 || fields[1] != source {
			t.Errorf("%s: %v, want source %s", name, fields, source)
		}
	}
	if !strings.Contains(stderr, "junk.wasm") || !strings.Contains(stderr, "compiling") {
		t.Errorf("stderr does not name the file left out:\n%s", stderr)
	}

	code, stdout, stderr = runCLI(t.Context(), t, nil, "--data-dir", data, "tools", "list", "--json")
	if code != exitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ti toolInfo
		if err := json.Unmarshal([]byte(l), &ti); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		got[ti.Name] = ti.Source
	}
	if got["codec"] != "wasm" || got["read_file"] != "builtin" || got["web_fetch"] != "builtin" {
		t.Errorf("source fields %v", got)
	}
}

// TestToolsList_RuntimeTools lists the runtime's own tools that the
// configuration turns on, with the source runtime, and prints their
// schemas.
func TestToolsList_RuntimeTools(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agcore.yaml")
	if err := os.WriteFile(cfg, []byte("sub_agents:\n  enabled: true\n  handoff: true\nagents:\n  - name: lead\n  - name: worker\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "tools", "list")
	if code != exitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	for _, name := range []string{"spawn_agent", "transfer_to_agent"} {
		if fields := strings.Fields(lineOf(stdout, name+" ")); len(fields) < 2 || fields[1] != "runtime" {
			t.Errorf("%s: %v, want source runtime\n%s", name, fields, stdout)
		}
	}
	code, stdout, stderr = runCLI(t.Context(), t, nil, "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "tools", "schema", "spawn_agent")
	if code != exitOK || !strings.Contains(stdout, `"agent"`) || !strings.Contains(stdout, "worker") {
		t.Errorf("tools schema spawn_agent: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
