package toolsys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawTool is a hand-written Tool for registry tests.
type rawTool struct {
	name    string
	perm    Permission
	secrets []string
	run     func(ctx context.Context, args json.RawMessage) (Result, error)
}

func (r *rawTool) Name() string        { return r.name }
func (r *rawTool) Description() string { return "Tool " + r.name + "." }
func (r *rawTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (r *rawTool) Permission() Permission { return r.perm }
func (r *rawTool) SecretParams() []string { return r.secrets }
func (r *rawTool) Idempotent() bool       { return false }
func (r *rawTool) Execute(ctx context.Context, args json.RawMessage, _ *Context) (Result, error) {
	if r.run == nil {
		return Result{Content: string(args)}, nil
	}
	return r.run(ctx, args)
}

func TestRegistry_RegisterGetUnregister(t *testing.T) {
	var r Registry // the zero value is usable
	r.MustRegister(&rawTool{name: "b"})
	r.MustRegister(&rawTool{name: "a"})
	if err := r.Register(&rawTool{name: "a"}); !errors.Is(err, ErrDuplicateTool) {
		t.Errorf("duplicate Register = %v, want ErrDuplicateTool", err)
	}
	for _, bad := range []string{"", "has space", strings.Repeat("x", 65)} {
		if err := r.Register(&rawTool{name: bad}); !errors.Is(err, ErrInvalidToolName) {
			t.Errorf("Register(%q) = %v, want ErrInvalidToolName", bad, err)
		}
	}
	if got := strings.Join(r.Names(), ","); got != "a,b" {
		t.Errorf("Names = %s", got)
	}
	defs := r.Definitions()
	if len(defs) != 2 || defs[0].Name != "a" || defs[0].Description != "Tool a." || string(defs[1].Parameters) == "" {
		t.Errorf("Definitions = %+v", defs)
	}
	tool, ok := r.Unregister("a")
	if !ok || tool.Name() != "a" {
		t.Fatalf("Unregister = %v, %v", tool, ok)
	}
	if _, ok := r.Get("a"); ok {
		t.Error("Get after Unregister found the tool")
	}
	if _, ok := r.Unregister("a"); ok {
		t.Error("second Unregister succeeded")
	}
}

func TestRegistry_TagsCategoriesAndView(t *testing.T) {
	r := NewRegistry(Config{})
	r.MustRegister(&rawTool{name: "read_file"}, WithTags("fs", "read"), WithCategory("files"))
	r.MustRegister(&rawTool{name: "write_file"}, WithTags("fs"), WithCategory("files"))
	r.MustRegister(&rawTool{name: "mcp__fs__stat"}, WithTags("mcp"))
	r.MustRegister(&rawTool{name: "bash"}, WithCategory("shell"))
	names := func(ts []Tool) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.Name())
		}
		return strings.Join(s, ",")
	}
	if got := names(r.ListByTag("fs")); got != "read_file,write_file" {
		t.Errorf("ListByTag(fs) = %s", got)
	}
	if got := names(r.ListByCategory("files")); got != "read_file,write_file" {
		t.Errorf("ListByCategory(files) = %s", got)
	}
	if info, ok := r.Info("read_file"); !ok || strings.Join(info.Tags, ",") != "fs,read" || info.Category != "files" {
		t.Errorf("Info = %+v", info)
	}

	v := r.View([]string{"read_file", "mcp__fs__*"})
	if got := strings.Join(v.Names(), ","); got != "mcp__fs__stat,read_file" {
		t.Errorf("view Names = %s", got)
	}
	if _, ok := v.Get("bash"); ok {
		t.Error("view exposes bash")
	}
	res, err := v.Call(t.Context(), "bash", nil, nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "available tools: mcp__fs__stat, read_file") || strings.Contains(res.Content, "bash,") {
		t.Errorf("view Call(bash) = %+v, %v", res, err)
	}
	r.MustRegister(&rawTool{name: "mcp__fs__read"})
	if got := len(v.Definitions()); got != 3 {
		t.Errorf("view follows registrations: %d definitions, want 3", got)
	}
	if got := len(r.View(nil).List()); got != 0 {
		t.Errorf("empty allow-list shows %d tools", got)
	}
}

func TestRegistry_CallUnknownListsTools(t *testing.T) {
	r := NewRegistry(Config{})
	res, err := r.Call(t.Context(), "nope", nil, nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "no tools are available") {
		t.Errorf("Call on empty registry = %+v, %v", res, err)
	}
	r.MustRegister(&rawTool{name: "zeta"})
	r.MustRegister(&rawTool{name: "alpha"})
	res, _ = r.Call(t.Context(), "nope", nil, nil)
	if res.Content != `unknown tool "nope"; available tools: alpha, zeta` {
		t.Errorf("Content = %q", res.Content)
	}
}

func TestRegistry_CallTyped(t *testing.T) {
	r := NewRegistry(Config{})
	st := &searchTool{got: make(chan searchParams, 1)}
	MustRegisterTyped[searchParams](r, st)
	res, err := r.Call(t.Context(), "search", json.RawMessage(`{"query":"go","mode":""}`), &Context{CallID: "c1"})
	if err != nil || res.IsError || res.Content != "found go" {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	res, _ = r.Call(t.Context(), "search", json.RawMessage(`{"query":"go","mode":"turbo"}`), nil)
	if !res.IsError || !strings.Contains(res.Content, `field "mode"`) {
		t.Errorf("invalid call = %+v", res)
	}
	st2, _ := r.Stats("search")
	if st2.Calls != 2 || st2.Errors != 1 {
		t.Errorf("Stats = %+v", st2)
	}
}

func TestRegistry_PermissionDenialIsResult(t *testing.T) {
	p, err := NewPermissions(PermissionConfig{Mode: ModeReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	r := NewRegistry(Config{Permissions: p})
	r.MustRegister(&rawTool{name: "bash", perm: PermExecute, run: func(context.Context, json.RawMessage) (Result, error) {
		ran = true
		return Result{}, nil
	}})
	res, err := r.Call(t.Context(), "bash", json.RawMessage(`{}`), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "by mode") || ran {
		t.Errorf("Call = %+v, %v (ran %v), want a denial naming the stage", res, err, ran)
	}
}

func TestRegistry_RuleSubjectFromTool(t *testing.T) {
	p, err := NewPermissions(PermissionConfig{Allow: []string{"search(git *)"}})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(Config{Permissions: p})
	MustRegisterTyped[searchParams](r, subjectTool{&searchTool{perm: PermExecute}})
	if res, _ := r.Call(t.Context(), "search", json.RawMessage(`{"query":"git log"}`), nil); res.IsError {
		t.Errorf("allowed call refused: %+v", res)
	}
	if res, _ := r.Call(t.Context(), "search", json.RawMessage(`{"query":"rm x"}`), nil); !res.IsError || !strings.Contains(res.Content, "approver") {
		t.Errorf("unmatched call = %+v, want an approver denial", res)
	}
}

func TestRegistry_RuleSubjectsFromTool(t *testing.T) {
	var asked ApprovalRequest
	p, err := NewPermissions(PermissionConfig{
		Allow: []string{"search(git *)"},
		Deny:  []string{"search(rm *)"},
		Approver: ApproverFunc(func(_ context.Context, r ApprovalRequest) (Approval, error) {
			asked = r
			return Approval{}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(Config{Permissions: p})
	MustRegisterTyped[searchParams](r, multiSubjectTool{&searchTool{perm: PermExecute}})
	tests := []struct {
		query, want string
		wantAsked   bool
	}{
		{"git log;git status", "", false},
		{"git log;make", "the approver refused", true},
		{"git log;rm x", "deny rule search(rm *)", false},
	}
	for _, tt := range tests {
		asked = ApprovalRequest{}
		res, err := r.Call(t.Context(), "search", json.RawMessage(`{"query":"`+tt.query+`"}`), nil)
		if err != nil || res.IsError != (tt.want != "") || !strings.Contains(res.Content, tt.want) {
			t.Errorf("%s: Call = %+v, %v; want %q", tt.query, res, err, tt.want)
		}
		if got := asked.Subject != ""; got != tt.wantAsked {
			t.Errorf("%s: approver asked %v, want %v", tt.query, got, tt.wantAsked)
		}
		if tt.wantAsked && (asked.Subject != `{"query":"`+tt.query+`"}` || len(asked.Subjects.Parts) != 2) {
			t.Errorf("%s: approver got subject %q and parts %q", tt.query, asked.Subject, asked.Subjects.Parts)
		}
	}
}

func TestRegistry_SecretsSubstitutedAndScrubbed(t *testing.T) {
	store := MapSecrets{"TOKEN": "s3cr3t-token"}
	r := NewRegistry(Config{Secrets: store})
	var seen string
	r.MustRegister(&rawTool{name: "echo", secrets: []string{"command"}, run: func(_ context.Context, args json.RawMessage) (Result, error) {
		seen = string(args)
		return Result{Content: "ran " + string(args), Metadata: map[string]any{"cmd": string(args)}}, nil
	}})
	r.MustRegister(&rawTool{name: "leak", run: func(context.Context, json.RawMessage) (Result, error) {
		return Result{}, fmt.Errorf("failed near s3cr3t-token")
	}})
	res, err := r.Call(t.Context(), "echo", json.RawMessage(`{"command":"use <secret_ref:TOKEN>"}`), nil)
	if err != nil || res.IsError {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	if !strings.Contains(seen, "s3cr3t-token") {
		t.Errorf("tool saw %s, want the secret value", seen)
	}
	if strings.Contains(res.Content, "s3cr3t-token") || !strings.Contains(res.Content, "<secret_ref:TOKEN>") || strings.Contains(fmt.Sprint(res.Metadata), "s3cr3t") {
		t.Errorf("result leaks the secret: %+v", res)
	}
	_, err = r.Call(t.Context(), "leak", nil, nil)
	if err == nil || strings.Contains(err.Error(), "s3cr3t-token") {
		t.Errorf("error leaks the secret: %v", err)
	}
	res, _ = r.Call(t.Context(), "echo", json.RawMessage(`{"path":"<secret_ref:TOKEN>"}`), nil)
	if !res.IsError || !strings.Contains(res.Content, `field "path"`) {
		t.Errorf("misplaced placeholder = %+v", res)
	}
	res, _ = r.Call(t.Context(), "echo", json.RawMessage(`{"command":"<secret_ref:MISSING>"}`), nil)
	if !res.IsError || !strings.Contains(res.Content, `"MISSING"`) {
		t.Errorf("unknown secret = %+v", res)
	}
}

func TestRegistry_PanicRecovered(t *testing.T) {
	r := NewRegistry(Config{})
	r.MustRegister(&rawTool{name: "boom", run: func(context.Context, json.RawMessage) (Result, error) { panic("kaboom") }})
	res, err := r.Call(t.Context(), "boom", nil, nil)
	if err != nil || !res.IsError || res.Content != "tool boom panicked: kaboom" {
		t.Errorf("Call = %+v, %v", res, err)
	}
	if s, _ := r.Stats("boom"); s.Errors != 1 {
		t.Errorf("Stats = %+v", s)
	}
}

func TestRegistry_OutputCap(t *testing.T) {
	r := NewRegistry(Config{OutputLimit: 8})
	r.MustRegister(&rawTool{name: "big", run: func(context.Context, json.RawMessage) (Result, error) {
		return Result{Content: "0123456789abcdef", Metadata: map[string]any{"k": 1}}, nil
	}})
	res, err := r.Call(t.Context(), "big", nil, nil)
	if err != nil || !strings.HasPrefix(res.Content, "01234567\n\n[... truncated, original size: 16 bytes") {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	if res.Metadata["truncated"] != true || res.Metadata["original_size"] != 16 || res.Metadata["k"] != 1 {
		t.Errorf("Metadata = %v", res.Metadata)
	}
	unlimited := NewRegistry(Config{OutputLimit: -1})
	unlimited.MustRegister(&rawTool{name: "big", run: func(context.Context, json.RawMessage) (Result, error) {
		return Result{Content: strings.Repeat("x", DefaultOutputLimit+1)}, nil
	}})
	if res, _ := unlimited.Call(t.Context(), "big", nil, nil); len(res.Content) != DefaultOutputLimit+1 {
		t.Errorf("negative limit capped output to %d bytes", len(res.Content))
	}
}

func TestRegistry_StatsAndTimeouts(t *testing.T) {
	now := time.Unix(0, 0)
	var mu sync.Mutex
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(10 * time.Millisecond)
		return now
	}
	r := NewRegistry(Config{Now: clock})
	r.MustRegister(&rawTool{name: "slow", run: func(ctx context.Context, _ json.RawMessage) (Result, error) {
		<-ctx.Done()
		return Result{}, ctx.Err()
	}})
	r.MustRegister(&rawTool{name: "ok"})
	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	_, err := r.Call(ctx, "slow", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "tool slow") {
		t.Errorf("Call = %v, want a wrapped deadline error", err)
	}
	for range 3 {
		if _, err := r.Call(t.Context(), "ok", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	all := r.AllStats()
	if s := all["slow"]; s.Calls != 1 || s.Errors != 1 || s.Timeouts != 1 || s.MaxLatency != 10*time.Millisecond {
		t.Errorf("slow stats = %+v", s)
	}
	if s := all["ok"]; s.Calls != 3 || s.Errors != 0 || s.AvgLatency() != 10*time.Millisecond || s.TotalLatency != 30*time.Millisecond {
		t.Errorf("ok stats = %+v", s)
	}
}

func TestRegistry_Concurrent(t *testing.T) {
	r := NewRegistry(Config{})
	MustRegisterTyped[searchParams](r, &searchTool{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("t%d", i)
			r.MustRegister(&rawTool{name: name})
			for range 50 {
				if res, err := r.Call(t.Context(), "search", json.RawMessage(`{"query":"q"}`), nil); err != nil || res.IsError {
					t.Errorf("Call = %+v, %v", res, err)
				}
				_ = r.Definitions()
				_, _ = r.Stats(name)
			}
			r.Unregister(name)
		})
	}
	wg.Wait()
	if s, _ := r.Stats("search"); s.Calls != 400 {
		t.Errorf("Calls = %d, want 400", s.Calls)
	}
}

func TestRegistry_ZeroConfigFailsClosed(t *testing.T) {
	tests := []struct {
		perm    Permission
		wantRun bool
	}{
		{PermNone, true},
		{PermReadOnly, true},
		{PermWrite, false},
		{PermExecute, false},
	}
	registries := map[string]func() *Registry{
		"NewRegistry(Config{})": func() *Registry { return NewRegistry(Config{}) },
		"zero Registry":         func() *Registry { return new(Registry) },
	}
	for name, newRegistry := range registries {
		for _, tt := range tests {
			t.Run(name+"/"+tt.perm.String(), func(t *testing.T) {
				runs := 0
				r := newRegistry()
				r.MustRegister(&rawTool{name: "tool", perm: tt.perm, run: func(context.Context, json.RawMessage) (Result, error) {
					runs++
					return Result{Content: "ran"}, nil
				}})
				res, err := r.Call(t.Context(), "tool", json.RawMessage(`{}`), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := runs == 1; got != tt.wantRun {
					t.Fatalf("tool ran %d times (result %+v), want ran = %v", runs, res, tt.wantRun)
				}
				if tt.wantRun {
					return
				}
				for _, want := range []string{"no approver", "PermissionConfig.Mode", "Allow", "Approver"} {
					if !res.IsError || !strings.Contains(res.Content, want) {
						t.Errorf("refusal %+v does not name %q", res, want)
					}
				}
			})
		}
	}
}

func TestRegistry_ZeroConfigAsksTheContextApprover(t *testing.T) {
	runs, asked := 0, 0
	r := NewRegistry(Config{})
	r.MustRegister(&rawTool{name: "bash", perm: PermExecute, run: func(context.Context, json.RawMessage) (Result, error) {
		runs++
		return Result{Content: "ran"}, nil
	}})
	approve := func(allow bool) context.Context {
		return WithApprover(t.Context(), ApproverFunc(func(_ context.Context, req ApprovalRequest) (Approval, error) {
			asked++
			if req.Tool != "bash" || !strings.Contains(req.Reason, "ask mode") {
				t.Errorf("approval request %+v", req)
			}
			return Approval{Allow: allow, Reason: "not now"}, nil
		}))
	}
	if res, err := r.Call(approve(false), "bash", json.RawMessage(`{}`), nil); err != nil || !res.IsError || !strings.Contains(res.Content, "not now") {
		t.Errorf("refused call = %+v, %v", res, err)
	}
	if res, err := r.Call(approve(true), "bash", json.RawMessage(`{}`), nil); err != nil || res.IsError {
		t.Errorf("approved call = %+v, %v", res, err)
	}
	if runs != 1 || asked != 2 {
		t.Errorf("tool ran %d times after %d approvals, want 1 run after 2", runs, asked)
	}
}

// TestRegistry_DefinitionsFollowChanges checks that the definitions a
// registry keeps between calls follow every Register and Unregister, and
// that a caller changing its copy changes nothing for the next caller.
func TestRegistry_DefinitionsFollowChanges(t *testing.T) {
	var r Registry
	names := func() string {
		var out []string
		for _, d := range r.Definitions() {
			out = append(out, d.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(); got != "" {
		t.Fatalf("empty registry: %q", got)
	}
	r.MustRegister(&rawTool{name: "b"})
	if got := names(); got != "b" {
		t.Fatalf("after Register(b): %q", got)
	}
	r.MustRegister(&rawTool{name: "a"})
	if got := names(); got != "a,b" {
		t.Fatalf("after Register(a): %q", got)
	}
	defs := r.Definitions()
	defs[0].Name, defs[0].Description = "changed", "changed"
	if got := r.Definitions(); got[0].Name != "a" || got[0].Description != "Tool a." {
		t.Fatalf("a caller's change reached the registry: %+v", got[0])
	}
	r.Unregister("b")
	if got := names(); got != "a" {
		t.Fatalf("after Unregister(b): %q", got)
	}
}

// BenchmarkRegistry_Definitions measures what a model request pays to
// describe the tools of a registry of eight.
func BenchmarkRegistry_Definitions(b *testing.B) {
	var r Registry
	for i := range 8 {
		r.MustRegister(&rawTool{name: fmt.Sprintf("tool_%d", i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(r.Definitions()) != 8 {
			b.Fatal("definitions lost")
		}
	}
}
