package wasm_test

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/wasm"
)

// escapeCall runs the escape tool name with args in ws and returns its
// report: per attempt, "ok" or the error the tool got.
func escapeCall(t *testing.T, tool *wasm.Tool, ws *toolsys.Workspace, args string) map[string]any {
	t.Helper()
	res, err := tool.Execute(t.Context(), json.RawMessage(args), &toolsys.Context{Workspace: ws})
	if err != nil || res.IsError {
		t.Fatalf("Execute(%s) = %+v, %v", args, res, err)
	}
	return res.Metadata
}

func TestSandbox_WritesStayInTheWorkspace(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	tool := load(t, rt, "escape_write")
	ws := workspace(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("outside\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws.Root(), "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(ws.Root(), "hardlink.txt")); err != nil {
		t.Fatal(err)
	}

	args, _ := json.Marshal(map[string]any{
		"write": []string{
			"inside.txt",
			"../escape1.txt",
			"/../escape2.txt",
			filepath.Join(outside, "escape3.txt"), // an absolute host path is a path in the workspace
			"link/escape4.txt",
			"planted/escape5.txt",
			"hardlink.txt",
		},
		"read":    []string{"link/secret.txt", "hardlink.txt", "inside.txt"},
		"symlink": "planted=../../../../../../../../" + strings.TrimPrefix(outside, "/"),
	})
	report := escapeCall(t, tool, ws, string(args))

	if report["write inside.txt"] != "ok" {
		t.Errorf("a write inside the workspace failed: %v", report["write inside.txt"])
	}
	if b, err := os.ReadFile(filepath.Join(ws.Root(), "inside.txt")); err != nil || string(b) != "escaped\n" {
		t.Errorf("inside.txt = %q, %v", b, err)
	}
	for _, name := range []string{"escape1.txt", "escape2.txt", "escape3.txt", "escape4.txt", "escape5.txt"} {
		if _, err := os.Stat(filepath.Join(outside, name)); err == nil {
			t.Errorf("%s was written outside the workspace", name)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(ws.Root()), "escape1.txt")); err == nil {
		t.Error("escape1.txt was written beside the workspace")
	}
	// The tool's ".." stops at its root, the workspace.
	if _, err := os.Stat(filepath.Join(ws.Root(), "escape1.txt")); err != nil {
		t.Errorf("../escape1.txt did not land in the workspace's root: %v", err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "outside\n" {
		t.Errorf("the file outside, hard-linked into the workspace, was changed: %q", b)
	}
	for _, key := range []string{"write link/escape4.txt", "write planted/escape5.txt", "write hardlink.txt",
		"read link/secret.txt", "read hardlink.txt"} {
		if v, _ := report[key].(string); v == "ok" || strings.HasPrefix(v, "ok:") || v == "" {
			t.Errorf("%s = %q, want an error", key, v)
		}
	}
	if report["read inside.txt"] != "ok: escaped\n" {
		t.Errorf("read inside.txt = %v", report["read inside.txt"])
	}
}

func TestSandbox_ReadOnlyToolCannotWrite(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	tool := load(t, rt, "escape_read_only")
	if tool.Permission() != toolsys.PermReadOnly {
		t.Fatalf("permission = %s", tool.Permission())
	}
	ws := workspace(t)
	if err := os.WriteFile(filepath.Join(ws.Root(), "notes.txt"), []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	report := escapeCall(t, tool, ws, `{"write":["new.txt","notes.txt"],"read":["notes.txt"],"symlink":"l=notes.txt"}`)
	for _, key := range []string{"write new.txt", "write notes.txt", "symlink l"} {
		if v, _ := report[key].(string); !strings.Contains(strings.ToLower(v), "read-only file system") {
			t.Errorf("%s = %q, want a read-only file system error", key, v)
		}
	}
	if report["read notes.txt"] != "ok: keep\n" {
		t.Errorf("read notes.txt = %v", report["read notes.txt"])
	}
	if _, err := os.Stat(filepath.Join(ws.Root(), "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new.txt exists (%v): a read-only tool wrote", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws.Root(), "notes.txt")); string(b) != "keep\n" {
		t.Errorf("notes.txt = %q: a read-only tool changed it", b)
	}
}

func TestSandbox_NoWorkspaceForPermNone(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	tool := load(t, rt, "escape_none")
	if tool.Permission() != toolsys.PermNone {
		t.Fatalf("permission = %s", tool.Permission())
	}
	ws := workspace(t)
	if err := os.WriteFile(filepath.Join(ws.Root(), "notes.txt"), []byte("private\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	report := escapeCall(t, tool, ws, `{"read":["notes.txt","/notes.txt"],"write":["new.txt"]}`)
	for _, key := range []string{"read notes.txt", "read /notes.txt", "write new.txt"} {
		if v, _ := report[key].(string); v == "" || strings.HasPrefix(v, "ok") {
			t.Errorf("%s = %q: a tool of permission none reached the workspace", key, v)
		}
	}
	if _, err := os.Stat(filepath.Join(ws.Root(), "new.txt")); err == nil {
		t.Error("new.txt was written by a tool of permission none")
	}
}

func TestSandbox_NoSockets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rt := newRuntime(t, wasm.Config{})
	tool := load(t, rt, "escape_write")
	report := escapeCall(t, tool, workspace(t), `{"dial":"`+ln.Addr().String()+`"}`)
	if v, _ := report["dial "+ln.Addr().String()].(string); v == "ok" || v == "" {
		t.Errorf("dial = %q, want an error", v)
	}
	// A connection the tool made would wait in the listener's backlog.
	if err := ln.(*net.TCPListener).SetDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Error("the tool connected to the listener")
	}
}
