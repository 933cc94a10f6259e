package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/toolsys"
)

func TestAll(t *testing.T) {
	pm := newManager(t, ProcessOptions{})
	want := map[string]struct {
		perm       toolsys.Permission
		idempotent bool
		secrets    string
	}{
		"read_file":    {toolsys.PermReadOnly, true, ""},
		"write_file":   {toolsys.PermWrite, true, ""},
		"edit_file":    {toolsys.PermWrite, false, ""},
		"list_dir":     {toolsys.PermReadOnly, true, ""},
		"glob":         {toolsys.PermReadOnly, true, ""},
		"grep":         {toolsys.PermReadOnly, true, ""},
		"bash":         {toolsys.PermExecute, false, "command,env"},
		"bash_process": {toolsys.PermExecute, false, ""},
		"web_fetch":    {toolsys.PermReadOnly, true, ""},
	}
	tools := All(Options{Processes: pm})
	if len(tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(tools), len(want))
	}
	for _, tool := range tools {
		w, ok := want[tool.Name()]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name())
			continue
		}
		delete(want, tool.Name())
		if tool.Permission() != w.perm || tool.Idempotent() != w.idempotent || strings.Join(tool.SecretParams(), ",") != w.secrets {
			t.Errorf("%s: permission %v idempotent %v secrets %v", tool.Name(), tool.Permission(), tool.Idempotent(), tool.SecretParams())
		}
		if tool.Description() == "" {
			t.Errorf("%s has no description", tool.Name())
		}
		var schema map[string]any
		if err := json.Unmarshal(tool.Schema(), &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s schema %s: %v", tool.Name(), tool.Schema(), err)
		}
	}
}

// call runs a bridged tool with raw JSON arguments.
func call(t *testing.T, tool toolsys.Tool, args string, tc *toolsys.Context) toolsys.Result {
	t.Helper()
	r, err := tool.Execute(context.Background(), json.RawMessage(args), tc)
	if err != nil {
		t.Fatalf("%s %s: %v", tool.Name(), args, err)
	}
	return r
}

func TestBridged(t *testing.T) {
	tc, root := newWorkspace(t)
	writeFiles(t, root, map[string]string{"a.txt": "one\ntwo\n"})
	pm := newManager(t, ProcessOptions{})
	tools := map[string]toolsys.Tool{}
	for _, tool := range All(Options{Processes: pm}) {
		tools[tool.Name()] = tool
	}
	tests := []struct {
		tool, args string
		wantErr    bool
		want       string
	}{
		{tool: "read_file", args: `{"path":"a.txt","offset":2}`, want: "     2\ttwo\n"},
		{tool: "read_file", args: `{"path":"a.txt","offset":"2"}`, wantErr: true, want: "offset"},
		{tool: "read_file", args: `{"path":"a.txt","offset":0}`, wantErr: true, want: "offset"},
		{tool: "read_file", args: `{"file":"a.txt"}`, wantErr: true, want: "file"},
		{tool: "read_file", args: `{"path":"a.txt"`, wantErr: true},
		{tool: "write_file", args: `{"path":"new/b.txt","content":""}`, want: "Created new/b.txt (0 bytes)"},
		{tool: "edit_file", args: `{"path":"a.txt","old_string":"","new_string":"x"}`, wantErr: true, want: "give old_string to replace text"},
		{tool: "edit_file", args: `{"path":"a.txt","old_string":"one","new_string":"ONE"}`, want: "Edited a.txt: 1 replacement"},
		{tool: "edit_file", args: `{"path":"a.txt","start_line":1,"end_line":1,"old_string":"ONE","new_string":"x"}`, wantErr: true, want: "not both"},
		{tool: "list_dir", args: `{"path":""}`, want: "a.txt\nnew/\n"},
		{tool: "glob", args: `{"pattern":"**/*.txt"}`, want: "a.txt\nnew/b.txt\n"},
		{tool: "grep", args: `{"pattern":"two","include":""}`, want: "a.txt:2:two\n"},
		{tool: "bash", args: `{"command":"echo $((6*7))","timeout_seconds":30}`, want: "42\n"},
		{tool: "bash", args: `{"command":"true","timeout_seconds":0}`, wantErr: true, want: "timeout_seconds"},
		{tool: "bash_process", args: `{"list":true}`, want: "No background processes."},
		{tool: "web_fetch", args: `{"url":"gopher://x"}`, wantErr: true, want: "unsupported URL scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			r := call(t, tools[tt.tool], tt.args, tc)
			if r.IsError != tt.wantErr {
				t.Fatalf("IsError = %v: %s", r.IsError, r.Content)
			}
			if !strings.Contains(r.Content, tt.want) {
				t.Fatalf("content %q does not contain %q", r.Content, tt.want)
			}
		})
	}
}

func TestRuleSubjects_Workspace(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "secrets"), filepath.Join(root, "innocent")); err != nil {
		t.Fatal(err)
	}
	ws, err := toolsys.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tc := &toolsys.Context{Workspace: ws}
	rs := toolsys.Bridge[WriteFileParams](NewWriteFile(Options{})).(toolsys.RuleSubjecter)
	for _, p := range []string{"secrets/key", filepath.Join(ws.Root(), "secrets", "key"), "docs/../secrets/key", "innocent/key", "./secrets//key"} {
		args, _ := json.Marshal(WriteFileParams{Path: p, Content: "x"})
		if got := rs.RuleSubject(args, tc); got != "secrets/key" {
			t.Errorf("subject of %q = %q, want %q", p, got, "secrets/key")
		}
	}

	// The rule holds through the registry, whatever spelling the model uses.
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeBypass, Deny: []string{"write_file(secrets/**)"}})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
	reg.MustRegister(toolsys.Bridge[WriteFileParams](NewWriteFile(Options{})))
	for _, p := range []string{filepath.Join(ws.Root(), "secrets", "k"), "innocent/k"} {
		args, _ := json.Marshal(WriteFileParams{Path: p, Content: "x"})
		res, err := reg.Call(context.Background(), "write_file", args, tc)
		if err != nil || !res.IsError || !strings.Contains(res.Content, "deny") {
			t.Errorf("write to %q: %+v, %v; want a deny-rule refusal", p, res, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "secrets", "k")); !os.IsNotExist(err) {
		t.Errorf("denied write happened: %v", err)
	}
}

func TestRuleSubjects(t *testing.T) {
	pm := newManager(t, ProcessOptions{})
	tests := []struct {
		tool, args, want string
	}{
		{"bash", `{"command":"git status"}`, "git status"},
		{"write_file", `{"path":"./docs//a/../b.md","content":"x"}`, "docs/b.md"},
		{"edit_file", `{"path":"src/x.go","old_string":"a","new_string":"b"}`, "src/x.go"},
		{"read_file", `{"path":"/abs/p"}`, "/abs/p"},
		{"list_dir", `{}`, "."},
		{"web_fetch", `{"url":"https://example.com/x"}`, "https://example.com/x"},
		{"bash_process", `{"process_id":"bg_3"}`, "bg_3"},
	}
	tools := map[string]toolsys.Tool{}
	for _, tool := range All(Options{Processes: pm}) {
		tools[tool.Name()] = tool
	}
	for _, tt := range tests {
		rs, ok := tools[tt.tool].(toolsys.RuleSubjecter)
		if !ok {
			t.Fatalf("%s is not a RuleSubjecter", tt.tool)
		}
		if got := rs.RuleSubject(json.RawMessage(tt.args), nil); got != tt.want {
			t.Errorf("%s subject = %q, want %q", tt.tool, got, tt.want)
		}
	}
}
