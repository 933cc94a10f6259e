package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/toolsys"
)

// fakeNotes is MemoryNotes in a map.
type fakeNotes struct {
	mu   sync.Mutex
	m    map[string]map[string]string
	fail error
}

func (f *fakeNotes) Get(_ context.Context, s, k string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.m[s][k]
	if !ok {
		return "", fmt.Errorf("note %q: %w", k, ErrMemoryNotFound)
	}
	return v, nil
}

func (f *fakeNotes) Set(_ context.Context, s, k, v string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	if f.m == nil {
		f.m = map[string]map[string]string{}
	}
	if f.m[s] == nil {
		f.m[s] = map[string]string{}
	}
	f.m[s][k] = v
	return nil
}

func (f *fakeNotes) Delete(_ context.Context, s, k string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m[s], k)
	return nil
}

func (f *fakeNotes) List(_ context.Context, s string) ([]MemoryNote, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []MemoryNote
	for k, v := range f.m[s] {
		out = append(out, MemoryNote{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b MemoryNote) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// fakePages is MemoryPages in a map; Search matches every word in the
// title or the content.
type fakePages struct {
	mu sync.Mutex
	m  map[string]MemoryPage
}

func (f *fakePages) Get(_ context.Context, id string) (MemoryPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.m[id]
	if !ok {
		return MemoryPage{}, fmt.Errorf("page %q: %w", id, ErrMemoryNotFound)
	}
	return p, nil
}

func (f *fakePages) Put(_ context.Context, p MemoryPage) (MemoryPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]MemoryPage{}
	}
	f.m[p.ID] = p
	return p, nil
}

func (f *fakePages) Delete(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, id)
	return nil
}

func (f *fakePages) Search(_ context.Context, q, prefix string, limit int) ([]MemoryHit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []MemoryHit
	for id, p := range f.m {
		if strings.HasPrefix(id, prefix) && allIn(strings.Fields(strings.ToLower(q)), strings.ToLower(p.Title+" "+p.Content)) {
			out = append(out, MemoryHit{Page: p, Score: 0.5})
		}
	}
	slices.SortFunc(out, func(a, b MemoryHit) int { return strings.Compare(a.Page.ID, b.Page.ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// memTools returns the memory tools over fresh fakes, by name.
func memTools(o MemoryOptions) map[string]toolsys.Tool {
	out := map[string]toolsys.Tool{}
	for _, t := range MemoryTools(o) {
		out[t.Name()] = t
	}
	return out
}

func run(t *testing.T, tool toolsys.Tool, tc *toolsys.Context, args string) toolsys.Result {
	t.Helper()
	res, err := tool.Execute(context.Background(), json.RawMessage(args), tc)
	if err != nil {
		t.Fatalf("%s(%s): %v", tool.Name(), args, err)
	}
	return res
}

func TestMemoryTools_Session(t *testing.T) {
	notes := &fakeNotes{}
	tools := memTools(MemoryOptions{Notes: notes})
	s1 := &toolsys.Context{SessionID: "s1", Agent: "a"}
	s2 := &toolsys.Context{SessionID: "s2", Agent: "a"}
	if res := run(t, tools["memory_write"], s1, `{"store":"session","key":"plan","content":"ship the parser\nthen the docs"}`); res.IsError {
		t.Fatal(res.Content)
	}
	if got, _ := notes.Get(context.Background(), "s1", "plan"); got != "ship the parser\nthen the docs" {
		t.Fatalf("stored %q", got)
	}
	if res := run(t, tools["memory_read"], s1, `{"store":"session","key":"plan"}`); res.IsError || res.Content != "ship the parser\nthen the docs" {
		t.Errorf("read = %+v", res)
	}
	if res := run(t, tools["memory_read"], s2, `{"store":"session","key":"plan"}`); !res.IsError || !strings.Contains(res.Content, `no session note "plan"`) {
		t.Errorf("another session read = %+v, want not found", res)
	}
	if res := run(t, tools["memory_search"], s1, `{"query":"PARSER ship"}`); res.IsError || res.Content != "[session] plan: ship the parser then the docs\n" {
		t.Errorf("search = %q", res.Content)
	}
	if res := run(t, tools["memory_search"], s1, `{"query":"parser tests"}`); res.IsError || !strings.Contains(res.Content, "nothing remembered") {
		t.Errorf("search without a match = %+v", res)
	}
	if res := run(t, tools["memory_delete"], s1, `{"store":"session","key":"plan"}`); res.IsError || res.Metadata["deleted"] != true {
		t.Errorf("delete = %+v", res)
	}
	if _, err := notes.Get(context.Background(), "s1", "plan"); !errors.Is(err, ErrMemoryNotFound) {
		t.Errorf("the note is still there: %v", err)
	}
	if res := run(t, tools["memory_delete"], s1, `{"store":"session","key":"plan"}`); res.IsError || res.Metadata["deleted"] != false {
		t.Errorf("second delete = %+v, want a no-op", res)
	}
}

func TestMemoryTools_KnowledgeScope(t *testing.T) {
	for _, tc := range []struct {
		scope         MemoryScope
		aliceID       string
		bobSeesAlice  bool
		bobSearchHits int
	}{
		{ScopeAgent, "alice:deploy", false, 0},
		{ScopeShared, "deploy", true, 1},
	} {
		t.Run(tc.scope.String(), func(t *testing.T) {
			pages := &fakePages{}
			tools := memTools(MemoryOptions{Pages: pages, Scope: tc.scope})
			alice := &toolsys.Context{SessionID: "s1", Agent: "alice"}
			bob := &toolsys.Context{SessionID: "s2", Agent: "bob"}
			res := run(t, tools["memory_write"], alice, `{"store":"knowledge","key":"deploy","content":"run make release","tags":["ops"]}`)
			if res.IsError {
				t.Fatal(res.Content)
			}
			p, err := pages.Get(context.Background(), tc.aliceID)
			if err != nil {
				t.Fatalf("page %s: %v", tc.aliceID, err)
			}
			if p.Title != "deploy" || p.Content != "run make release" {
				t.Errorf("page = %+v", p)
			}
			if res := run(t, tools["memory_read"], alice, `{"store":"knowledge","key":"deploy"}`); res.IsError || res.Content != "# deploy\n\nrun make release" {
				t.Errorf("alice reads %+v", res)
			}
			res = run(t, tools["memory_read"], bob, `{"store":"knowledge","key":"deploy"}`)
			if res.IsError == tc.bobSeesAlice {
				t.Errorf("bob reads alice's page: %+v, want seen=%v", res, tc.bobSeesAlice)
			}
			res = run(t, tools["memory_search"], bob, `{"query":"release","store":"knowledge"}`)
			if got := res.Metadata["results"]; got != tc.bobSearchHits {
				t.Errorf("bob's search found %v pages, want %d: %s", got, tc.bobSearchHits, res.Content)
			}
			// Bob cannot reach alice's page by naming its id either.
			res = run(t, tools["memory_delete"], bob, `{"store":"knowledge","key":"alice:deploy"}`)
			if _, err := pages.Get(context.Background(), tc.aliceID); err != nil {
				t.Errorf("bob's delete removed alice's page: %+v", res)
			}
			if res := run(t, tools["memory_search"], alice, `{"query":"release"}`); !strings.Contains(res.Content, "[knowledge] deploy (score 0.50): deploy — run make release") {
				t.Errorf("alice's search = %q", res.Content)
			}
			if tc.scope == ScopeAgent && !slices.Contains(p.Tags, "agent:alice") {
				t.Errorf("tags = %v, want agent:alice", p.Tags)
			}
		})
	}
}

func TestMemoryTools_Refusals(t *testing.T) {
	notes := &fakeNotes{}
	both := memTools(MemoryOptions{Notes: notes, Pages: &fakePages{}, MaxValueBytes: 10})
	onlyNotes := memTools(MemoryOptions{Notes: notes})
	ctx := &toolsys.Context{SessionID: "s", Agent: "a"}
	for _, tc := range []struct {
		name  string
		tools map[string]toolsys.Tool
		tool  string
		tc    *toolsys.Context
		args  string
		want  string
	}{
		{"value too large", both, "memory_write", ctx, `{"store":"session","key":"k","content":"12345678901"}`, "11 bytes is more than the 10"},
		{"knowledge not enabled", onlyNotes, "memory_write", ctx, `{"store":"knowledge","key":"k","content":"x"}`, "knowledge.enabled"},
		{"unknown store", both, "memory_read", ctx, `{"store":"disk","key":"k"}`, "store"},
		{"no session", both, "memory_write", &toolsys.Context{Agent: "a"}, `{"store":"session","key":"k","content":"x"}`, "needs a session"},
		{"no agent", both, "memory_read", &toolsys.Context{SessionID: "s"}, `{"store":"knowledge","key":"k"}`, "names no agent"},
		{"agent with a colon", both, "memory_read", &toolsys.Context{SessionID: "s", Agent: "a:b"}, `{"store":"knowledge","key":"k"}`, "holds ':'"},
		{"empty key", both, "memory_write", ctx, `{"store":"session","key":"","content":"x"}`, "key"},
		{"blank query", both, "memory_search", ctx, `{"query":"  "}`, "query is empty"},
		{"missing knowledge page", both, "memory_read", ctx, `{"store":"knowledge","key":"nope"}`, `no knowledge page "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, tc.tools[tc.tool], tc.tc, tc.args)
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("%s = %+v, want an error result with %q", tc.tool, res, tc.want)
			}
		})
	}
	if len(notes.m["s"]) != 0 {
		t.Errorf("a refused write stored %v", notes.m)
	}
	notes.fail = errors.New("disk full")
	if res := run(t, both["memory_write"], ctx, `{"store":"session","key":"k","content":"x"}`); !res.IsError || !strings.Contains(res.Content, "disk full") {
		t.Errorf("store failure = %+v", res)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := both["memory_write"].Execute(cancelled, json.RawMessage(`{"store":"session","key":"k","content":"x"}`), ctx); err == nil {
		t.Error("a cancelled call returned no Go error")
	}
}

func TestMemoryTools_Permissions(t *testing.T) {
	tools := memTools(MemoryOptions{Notes: &fakeNotes{}})
	for name, want := range map[string]toolsys.Permission{"memory_write": toolsys.PermWrite, "memory_delete": toolsys.PermWrite,
		"memory_read": toolsys.PermReadOnly, "memory_search": toolsys.PermReadOnly} {
		if got := tools[name].Permission(); got != want {
			t.Errorf("%s permission = %v, want %v", name, got, want)
		}
	}
	rs := tools["memory_write"].(toolsys.RuleSubjecter)
	if got := rs.RuleSubject(json.RawMessage(`{"store":"knowledge","key":"k","content":"x"}`), nil); got != "knowledge:k" {
		t.Errorf("rule subject = %q", got)
	}
}

func TestParseMemoryScope(t *testing.T) {
	for in, want := range map[string]MemoryScope{"": ScopeAgent, "agent": ScopeAgent, "shared": ScopeShared} {
		if got, err := ParseMemoryScope(in); err != nil || got != want {
			t.Errorf("ParseMemoryScope(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseMemoryScope("global"); err == nil || !strings.Contains(err.Error(), "agent or shared") {
		t.Errorf("ParseMemoryScope(global) = %v", err)
	}
}

// FuzzMemoryScope: in agent scope, whatever key another agent names, it
// neither reads, finds nor deletes alice's page.
func FuzzMemoryScope(f *testing.F) {
	f.Add("bob", "secret")
	f.Add("bob", "alice:secret")
	f.Add("alice2", ":secret")
	f.Add("ALICE", "secret")
	f.Add("bob", "../alice:secret")
	f.Fuzz(func(t *testing.T, agent, key string) {
		if agent == "alice" {
			return
		}
		pages := &fakePages{}
		tools := memTools(MemoryOptions{Pages: pages})
		alice := &toolsys.Context{SessionID: "s", Agent: "alice"}
		if res := run(t, tools["memory_write"], alice, `{"store":"knowledge","key":"secret","content":"the launch code"}`); res.IsError {
			t.Fatal(res.Content)
		}
		other := &toolsys.Context{SessionID: "s", Agent: agent}
		k, _ := json.Marshal(key)
		for _, call := range []struct{ tool, args string }{
			{"memory_read", `{"store":"knowledge","key":` + string(k) + `}`},
			{"memory_search", `{"store":"knowledge","query":"launch code"}`},
			{"memory_delete", `{"store":"knowledge","key":` + string(k) + `}`},
		} {
			res, err := tools[call.tool].Execute(context.Background(), json.RawMessage(call.args), other)
			if err != nil {
				t.Fatalf("%s: %v", call.tool, err)
			}
			if strings.Contains(res.Content, "launch code") && !strings.Contains(res.Content, "nothing remembered") {
				t.Fatalf("agent %q reached alice's page through %s(%s): %q", agent, call.tool, call.args, res.Content)
			}
		}
		if _, err := pages.Get(context.Background(), "alice:secret"); err != nil {
			t.Fatalf("agent %q deleted alice's page with key %q", agent, key)
		}
	})
}
