package actors_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// countingMemory is a session memory whose snapshot is one fact, counting
// the reads.
type countingMemory struct {
	mu    sync.Mutex
	fact  string
	reads int
}

func (m *countingMemory) Snapshot(context.Context, string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	return "<session-context>\nfact: " + m.fact + "\n</session-context>", nil
}

func (m *countingMemory) set(fact string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fact = fact
}

func (m *countingMemory) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads
}

// TestPrompt_LayersKeptPerSession: the session reads its session memory
// once per turn, not once per model call, and again after a tool that may
// have written to it (a tool above read-only); each request carries the
// memory as it stands.
func TestPrompt_LayersKeptPerSession(t *testing.T) {
	mem := &countingMemory{fact: "one"}
	remember := &funcTool{name: "remember", perm: toolsys.PermWrite, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		mem.set("two")
		return toolsys.Result{Content: "remembered"}, nil
	}}
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Exact: "look"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "lookup", Arguments: `{}`}}}},
		{Match: scripted.Match{Exact: "write"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "remember", Arguments: `{}`}}}},
		{Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "done"}},
	}}
	rec := &recorder{}
	f := newFixture(t, script, []toolsys.Tool{echoTool("lookup"), remember}, func(c *actors.Config) {
		c.BasePrompt = "Base."
		c.SessionMemory = mem
		c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
	})
	facts := func() []string {
		var out []string
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, hc := range rec.calls {
			sys := hc.Request.Messages[0].Text()
			out = append(out, sys[strings.LastIndex(sys, "fact: ")+len("fact: "):strings.LastIndex(sys, "\n")])
		}
		return out
	}
	for _, tt := range []struct {
		input     string
		reads     int
		wantFacts []string
	}{
		{"look", 1, []string{"one", "one"}},
		{"write", 3, []string{"one", "one", "one", "two"}},
		{"look", 4, []string{"one", "one", "one", "two", "two", "two"}},
	} {
		if _, err := f.sess.Submit(t.Context(), messages.UserText(tt.input)); err != nil {
			t.Fatal(err)
		}
		if got := mem.count(); got != tt.reads {
			t.Errorf("after %q: %d reads of the session memory, want %d", tt.input, got, tt.reads)
		}
		if got := facts(); strings.Join(got, ",") != strings.Join(tt.wantFacts, ",") {
			t.Errorf("after %q: the requests carried facts %v, want %v", tt.input, got, tt.wantFacts)
		}
	}
}

// TestPrompt_NoEnvironmentUnlessAsked: a runtime configured with no prompt
// sends the conversation alone, as a bare loop would; EnvironmentPrompt
// adds the environment layer.
func TestPrompt_NoEnvironmentUnlessAsked(t *testing.T) {
	for _, env := range []bool{false, true} {
		rec := &recorder{}
		f := newFixture(t, textScript("ok"), nil, func(c *actors.Config) {
			c.EnvironmentPrompt = env
			c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
		})
		if _, err := f.sess.Submit(t.Context(), messages.UserText("hi")); err != nil {
			t.Fatal(err)
		}
		msgs := rec.last(actors.PreRequest).Request.Messages
		switch {
		case !env && (len(msgs) != 1 || msgs[0].Role != messages.RoleUser):
			t.Errorf("without EnvironmentPrompt the request is %+v, want the user message alone", msgs)
		case env && (len(msgs) != 2 || !strings.Contains(msgs[0].Text(), "<environment>\nsession: s1\nagent: default\n")):
			t.Errorf("with EnvironmentPrompt the request is %+v, want the environment layer first", msgs)
		}
	}
}
