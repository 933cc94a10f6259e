package config

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/knowledge"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/builtin"
)

func TestParse_MemoryTools(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte("memory_tools:\n  enabled: true\n  scope: shared\n  max_value_bytes: 1024\n  max_results: 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.MemoryTools; !m.Enabled || m.Scope != "shared" || m.MaxValueBytes != 1024 || m.MaxResults != 5 {
		t.Errorf("memory_tools = %+v", m)
	}
	for in, want := range map[string]string{
		"memory_tools:\n  scope: global\n":       "agcore.yaml:2: memory_tools.scope: unknown memory scope \"global\"",
		"memory_tools:\n  max_value_bytes: -1\n": "memory_tools.max_value_bytes: must not be negative",
		"memory_tools:\n  max_results: 51\n":     "memory_tools.max_results: must be between 0 and 50",
		"memory_tools:\n  enabeld: true\n":       "enabeld",
		"memory_tools:\n  enabled: sometimes\n":  "memory_tools.enabled",
		"memory_tools:\n  max_results: [1, 2]\n": "memory_tools.max_results",
		"memory_tools:\n  scope: \"\"\n  x: 1\n": "memory_tools.x",
	} {
		if _, err := Parse("agcore.yaml", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestBuild_MemoryToolsNeedADataDir(t *testing.T) {
	cfg := Default()
	cfg.DataDir, cfg.Workspace = "", t.TempDir()
	cfg.MemoryTools.Enabled = true
	if _, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true}); err == nil || !strings.Contains(err.Error(), "memory_tools.enabled needs a data directory") {
		t.Fatalf("Build = %v, want the data directory asked for", err)
	}
}

func TestBuild_MemoryToolsListedWithoutOpeningTheStore(t *testing.T) {
	cfg := Default()
	cfg.DataDir, cfg.Workspace = filepath.Join(t.TempDir(), "data"), t.TempDir()
	cfg.MemoryTools.Enabled = true
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true, ToolsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	for _, name := range []string{"memory_write", "memory_read", "memory_search", "memory_delete"} {
		if info, ok := built.Tools.Info(name); !ok || info.Source != toolsys.SourceBuiltin || info.Category != "memory" {
			t.Errorf("%s = %+v (registered %v), want a builtin memory tool", name, info, ok)
		}
	}
	if _, err := os.Stat(cfg.DataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("listing the tools created the data directory: %v", err)
	}
	off := Default()
	off.DataDir, off.Workspace = t.TempDir(), t.TempDir()
	built2, err := Build(t.Context(), off, BuildOptions{SkipMCP: true, ToolsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built2.Close()
	if _, ok := built2.Tools.Get("memory_write"); ok {
		t.Error("memory_write is registered without memory_tools.enabled")
	}
}

// promptRecorder keeps the system prompt of every model request.
type promptRecorder struct {
	mu      sync.Mutex
	prompts []string
}

func (r *promptRecorder) hook() actors.Hook {
	return actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
		r.mu.Lock()
		defer r.mu.Unlock()
		if hc.Request != nil && len(hc.Request.Messages) > 0 && hc.Request.Messages[0].Role == messages.RoleSystem {
			r.prompts = append(r.prompts, hc.Request.Messages[0].Text())
		}
		return actors.HookResult{}
	})
}

func (r *promptRecorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.prompts) == 0 {
		return ""
	}
	return r.prompts[len(r.prompts)-1]
}

// TestBuild_MemoryToolsInATurn: a model's memory_write calls store a
// knowledge page under the calling agent and a session note that the next
// request's system prompt shows.
func TestBuild_MemoryToolsInATurn(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte(`
durability: none
agents:
  - name: coder
knowledge:
  enabled: true
memory_tools:
  enabled: true
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.Workspace = t.TempDir(), t.TempDir()
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	prov, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Exact: "remember"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			{Name: "memory_write", Arguments: `{"store":"knowledge","key":"deploy","content":"run make release"}`},
			{Name: "memory_write", Arguments: `{"store":"session","key":"plan","content":"ship on Friday"}`},
		}}},
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}},
	}}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rc := built.Runtime
	rc.Providers, rc.Provider, rc.Model = nil, prov, ""
	rec := &promptRecorder{}
	rc.Hooks.Register(actors.PreRequest, rec.hook())
	rt, err := actors.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	}()
	sess, err := rt.Open(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.Submit(t.Context(), messages.UserText("remember"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.ToolCalls {
		if c.IsError {
			t.Fatalf("%s failed: %s", c.Name, c.Content)
		}
	}
	page, err := built.knowledge.Get(t.Context(), "coder:deploy")
	if err != nil || page.Content != "run make release" {
		t.Fatalf("page coder:deploy = %+v, %v", page, err)
	}
	if _, err := sess.Submit(t.Context(), messages.UserText("next")); err != nil {
		t.Fatal(err)
	}
	if got := rec.last(); !strings.Contains(got, "<session-context>\nplan: ship on Friday\n</session-context>") {
		t.Errorf("the next request's system prompt does not show the note:\n%s", got)
	}
}

// memoryFixture is the memory tools over an in-memory store.
type memoryFixture struct {
	tools map[string]toolsys.Tool
	kb    *knowledge.Base
	tc    *toolsys.Context
}

func newMemoryFixture(t *testing.T, policy knowledge.Policy, o builtin.MemoryOptions) memoryFixture {
	t.Helper()
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	kb, err := knowledge.New(store, knowledge.Options{Eviction: policy, Clock: func() time.Time {
		clock = clock.Add(time.Second)
		return clock
	}})
	if err != nil {
		t.Fatal(err)
	}
	o.Notes = NotesFrom(memory.NewSessionMemory(store, memory.SessionMemoryOptions{MaxValueBytes: 16}))
	o.Pages = PagesFrom(kb)
	f := memoryFixture{tools: map[string]toolsys.Tool{}, kb: kb, tc: &toolsys.Context{SessionID: "s1", Agent: "coder"}}
	for _, tool := range builtin.MemoryTools(o) {
		f.tools[tool.Name()] = tool
	}
	return f
}

func (f memoryFixture) call(t *testing.T, name, args string) toolsys.Result {
	t.Helper()
	res, err := f.tools[name].Execute(t.Context(), json.RawMessage(args), f.tc)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	return res
}

// TestMemoryTools_KnowledgeEviction: pages written by memory_write obey
// the knowledge base's eviction policy like any other page.
func TestMemoryTools_KnowledgeEviction(t *testing.T) {
	f := newMemoryFixture(t, knowledge.Policy{Kind: knowledge.EvictCapacity, MaxPages: 2, CheckInterval: 1}, builtin.MemoryOptions{})
	for _, key := range []string{"first", "second", "third"} {
		if res := f.call(t, "memory_write", `{"store":"knowledge","key":"`+key+`","content":"note `+key+`"}`); res.IsError {
			t.Fatalf("write %s: %s", key, res.Content)
		}
	}
	if n, err := f.kb.Count(t.Context()); err != nil || n != 2 {
		t.Fatalf("pages kept = %d, %v; want 2", n, err)
	}
	if res := f.call(t, "memory_read", `{"store":"knowledge","key":"first"}`); !res.IsError || !strings.Contains(res.Content, `no knowledge page "first"`) {
		t.Errorf("read of the evicted page = %+v", res)
	}
	if res := f.call(t, "memory_read", `{"store":"knowledge","key":"third"}`); res.IsError || res.Content != "# third\n\nnote third" {
		t.Errorf("read of the newest page = %+v", res)
	}
}

// TestMemoryTools_Store: the adapters over Badger: the session memory's
// value limit, its key rules and not-found, and a knowledge search that
// keeps the agent's pages and counts them as recalled.
func TestMemoryTools_Store(t *testing.T) {
	f := newMemoryFixture(t, knowledge.Policy{}, builtin.MemoryOptions{})
	if res := f.call(t, "memory_write", `{"store":"session","key":"k","content":"more than sixteen bytes"}`); !res.IsError || !strings.Contains(res.Content, "exceeds 16") {
		t.Errorf("a value past the session memory's limit = %+v", res)
	}
	if res := f.call(t, "memory_write", `{"store":"knowledge","key":"a/b","content":"x"}`); !res.IsError || !strings.Contains(res.Content, "'/'") {
		t.Errorf("a key with a slash = %+v", res)
	}
	if res := f.call(t, "memory_read", `{"store":"session","key":"nope"}`); !res.IsError || !strings.Contains(res.Content, `no session note "nope"`) {
		t.Errorf("missing note = %+v", res)
	}
	if _, err := f.kb.Create(t.Context(), knowledge.Page{ID: "reviewer:release", Title: "Release checklist", Content: "tag and push"}); err != nil {
		t.Fatal(err)
	}
	if res := f.call(t, "memory_write", `{"store":"knowledge","key":"release","title":"Release checklist","content":"make release"}`); res.IsError {
		t.Fatal(res.Content)
	}
	res := f.call(t, "memory_search", `{"query":"release checklist","store":"knowledge"}`)
	if res.IsError || res.Metadata["results"] != 1 || !strings.HasPrefix(res.Content, "[knowledge] release (score ") {
		t.Fatalf("search = %+v, want coder's page alone", res)
	}
	mine, _ := f.kb.Get(t.Context(), "coder:release")
	theirs, _ := f.kb.Get(t.Context(), "reviewer:release")
	if mine.AccessCount != 1 || theirs.AccessCount != 0 {
		t.Errorf("recalls: coder's page %d, reviewer's page %d; want 1 and 0", mine.AccessCount, theirs.AccessCount)
	}
	if res := f.call(t, "memory_delete", `{"store":"knowledge","key":"release"}`); res.IsError || res.Metadata["deleted"] != true {
		t.Errorf("delete = %+v", res)
	}
	if _, err := f.kb.Get(t.Context(), "coder:release"); !errors.Is(err, knowledge.ErrNotFound) {
		t.Errorf("the page is still there: %v", err)
	}
	if _, err := f.kb.Get(t.Context(), "reviewer:release"); err != nil {
		t.Errorf("another agent's page went too: %v", err)
	}
}

func TestParse_KnowledgeEviction(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte("knowledge:\n  enabled: true\n  eviction:\n    policy: recall\n    max_pages: 500\n    half_life: 72h\n    check_interval: 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := knowledge.Policy{Kind: knowledge.EvictRecallBased, MaxPages: 500, HalfLife: 72 * time.Hour, CheckInterval: 8}
	if got := cfg.Knowledge.Eviction.KnowledgePolicy(); got != want {
		t.Errorf("policy = %+v, want %+v", got, want)
	}
	for in, want := range map[string]string{
		"knowledge:\n  eviction:\n    policy: lru\n":        "agcore.yaml:3: knowledge.eviction.policy: unknown policy \"lru\"",
		"knowledge:\n  eviction:\n    policy: ttl\n":        "knowledge.eviction.ttl: must be positive for the ttl policy",
		"knowledge:\n  eviction:\n    policy: capacity\n":   "knowledge.eviction.max_pages: must be positive for the capacity policy",
		"knowledge:\n  eviction:\n    half_life: -1h\n":     "knowledge.eviction.half_life: must not be negative",
		"knowledge:\n  eviction:\n    check_interval: -1\n": "knowledge.eviction.check_interval: must not be negative",
	} {
		if _, err := Parse("agcore.yaml", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}

// TestBuild_KnowledgeEvictionAppliesToMemoryTools: with a capacity of two
// pages, a third page written by memory_write evicts the oldest.
func TestBuild_KnowledgeEvictionAppliesToMemoryTools(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte(`
knowledge:
  enabled: true
  eviction: {policy: capacity, max_pages: 2, check_interval: 1}
memory_tools:
  enabled: true
  scope: shared
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.Workspace = t.TempDir(), t.TempDir()
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	tc := &toolsys.Context{SessionID: "s1", Agent: "default"}
	for _, key := range []string{"a", "b", "c"} {
		res, err := built.Tools.Call(t.Context(), "memory_write", json.RawMessage(`{"store":"knowledge","key":"`+key+`","content":"page `+key+`"}`), tc)
		if err != nil || res.IsError {
			t.Fatalf("write %s: %+v, %v", key, res, err)
		}
	}
	if n, err := built.knowledge.Count(t.Context()); err != nil || n != 2 {
		t.Fatalf("pages = %d, %v; want 2", n, err)
	}
	if _, err := built.knowledge.Get(t.Context(), "a"); !errors.Is(err, knowledge.ErrNotFound) {
		t.Errorf("the oldest page is still there: %v", err)
	}
}

// TestBuild_MemoryToolsValueCap: memory_tools.max_value_bytes caps notes
// and pages alike, and a refused write stores nothing.
func TestBuild_MemoryToolsValueCap(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte("knowledge:\n  enabled: true\nmemory_tools:\n  enabled: true\n  max_value_bytes: 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.Workspace = t.TempDir(), t.TempDir()
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	tc := &toolsys.Context{SessionID: "s1", Agent: "default"}
	for _, store := range []string{"session", "knowledge"} {
		res, err := built.Tools.Call(t.Context(), "memory_write", json.RawMessage(`{"store":"`+store+`","key":"k","content":"123456789"}`), tc)
		if err != nil || !res.IsError || !strings.Contains(res.Content, "9 bytes is more than the 8") {
			t.Errorf("%s: %+v, %v; want refused", store, res, err)
		}
		res, err = built.Tools.Call(t.Context(), "memory_read", json.RawMessage(`{"store":"`+store+`","key":"k"}`), tc)
		if err != nil || !res.IsError {
			t.Errorf("%s: the refused write stored %+v", store, res)
		}
	}
}
