package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys/sandbox"
)

func TestToolsList_ShowsConfinement(t *testing.T) {
	st := sandbox.Probe(context.Background())
	label := "unconfined"
	if st.Confined {
		label = st.String()
	}
	t.Chdir(t.TempDir())
	code, stdout, stderr := runCLI(t.Context(), t, nil, "tools", "list")
	if code != exitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	for _, name := range []string{"bash", "bash_process"} {
		line := lineOf(stdout, name+" ")
		if !strings.HasSuffix(strings.TrimSpace(line), label) {
			t.Errorf("%s: %q does not end with %q", name, line, label)
		}
	}
	if line := lineOf(stdout, "read_file "); !strings.HasSuffix(strings.TrimSpace(line), " -") {
		t.Errorf("read_file: %q", line)
	}
	if strings.Contains(stdout, "sandbox: unconfined") == st.Confined {
		t.Errorf("the note below the table does not match the status %v:\n%s", st, stdout)
	}

	code, stdout, stderr = runCLI(t.Context(), t, nil, "tools", "list", "--json")
	if code != exitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ti toolInfo
		if err := json.Unmarshal([]byte(l), &ti); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		got[ti.Name] = ti.Sandbox
	}
	if got["bash"] != label || got["bash_process"] != label || got["read_file"] != "" {
		t.Errorf("sandbox fields %v", got)
	}
}

// lineOf returns the first line of s that starts with prefix.
func lineOf(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestSandboxNote(t *testing.T) {
	off := sandbox.Status{Reason: "the kernel has no Landlock"}
	tests := []struct {
		name string
		st   sandbox.Status
		mode sandbox.Mode
		want string
	}{
		{"confined", sandbox.Status{Confined: true, ABI: 7}, sandbox.Refuse, ""},
		{"refuse", off, sandbox.Refuse, "sandbox: unconfined: the kernel has no Landlock; bash and bash_process refuse to run (set sandbox.mode: warn to run commands unconfined)"},
		{"warn", off, sandbox.Warn, "sandbox: unconfined: the kernel has no Landlock; commands run unconfined (sandbox.mode: warn)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sandboxNote(tt.st, tt.mode); got != tt.want {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestBinary_ConfinesBash checks that the agcore binary installs the hook:
// tools list shows bash confined, and bash served over MCP cannot read or
// write outside its workspace.
func TestBinary_ConfinesBash(t *testing.T) {
	st := sandbox.Probe(context.Background())
	if !st.Confined {
		t.Skipf("Landlock is unavailable here: %s", st)
	}
	bin := buildBinary(t)
	execBin(t, bin, "", "", nil, "tools", "list").check(t, exitOK, "bash          builtin  execute     shell     builtin,shell  0      0       -    "+st.String())

	outside := t.TempDir()
	ws := filepath.Join(outside, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOP-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "mcp", "serve", "--workspace", ws, "--mode", "bypass")
	cmd.Env = userEnv()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	bash := func(command string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command}})
		if err != nil {
			t.Fatalf("bash %q: %v", command, err)
		}
		return res.Content[0].(*sdk.TextContent).Text, res.IsError
	}
	if out, isErr := bash("cat ../secret.txt; echo pwned > ../out.txt"); !isErr || strings.Contains(out, "TOP-SECRET") {
		t.Errorf("bash read outside its workspace: %q", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bash wrote outside its workspace (stat: %v)", err)
	}
	if out, isErr := bash("echo inside > in.txt && cat in.txt"); isErr || out != "inside\n" {
		t.Errorf("bash in its workspace: %q (error %v)", out, isErr)
	}
}
