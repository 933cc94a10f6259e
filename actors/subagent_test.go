package actors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// usage15 is the usage every scripted reply of these tests reports, so that
// sums can be checked exactly.
var usage15 = &messages.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}

// spawnCall is a spawn_agent call of an ad-hoc sub-agent.
func spawnCall(task string, tools ...string) scripted.ToolCall {
	args := map[string]any{"system_prompt": "You carry out one task.", "task": task}
	if tools != nil {
		args["tools"] = tools
	}
	b, _ := json.Marshal(args)
	return scripted.ToolCall{Name: actors.SpawnAgentToolName, Arguments: string(b)}
}

// barrier is a tool that returns once n calls are inside it at the same
// time (or its context ends), and records the highest concurrency seen.
type barrier struct {
	n       int
	mu      sync.Mutex
	inside  int
	maxSeen int
	all     chan struct{}
	once    sync.Once
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) tool() *funcTool {
	return &funcTool{name: "gate", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		b.mu.Lock()
		b.inside++
		b.maxSeen = max(b.maxSeen, b.inside)
		if b.inside >= b.n {
			b.once.Do(func() { close(b.all) })
		}
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			b.inside--
			b.mu.Unlock()
		}()
		select {
		case <-b.all:
			return toolsys.Result{Content: "through"}, nil
		case <-ctx.Done():
			return toolsys.Result{}, ctx.Err()
		}
	}}
}

func (b *barrier) max() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.maxSeen
}

// fanOutScript: the parent answers "fan out" with n spawns of a sub-agent
// that calls gate once and answers "found <topic>"; the parent then answers
// "summary". Every reply reports usage15.
func fanOutScript(n int) scripted.Script {
	calls := make([]scripted.ToolCall, n)
	for i := range calls {
		calls[i] = spawnCall(fmt.Sprintf("research topic %d", i), "gate")
	}
	return scripted.Script{Rules: []scripted.Rule{
		{Name: "fan-out", Match: scripted.Match{Role: messages.RoleUser, Exact: "fan out"}, Reply: scripted.Reply{ToolCalls: calls, Usage: usage15}},
		{Name: "research", Match: scripted.Match{Role: messages.RoleUser, Contains: "research topic"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "gate", Arguments: "{}"}}, Usage: usage15}},
		{Name: "found", Match: scripted.Match{Tool: "gate"}, Reply: scripted.Reply{Text: "found it", Usage: usage15}},
		{Name: "summary", Match: scripted.Match{Tool: actors.SpawnAgentToolName}, Reply: scripted.Reply{Text: "summary", Usage: usage15}},
	}}
}

// collect runs input on sess and returns the turn's events, failing on a
// stream error.
func collect(t *testing.T, sess *actors.Session, input string, opts ...actors.SubmitOption) []messages.Event {
	t.Helper()
	var evs []messages.Event
	for ev, err := range sess.Stream(t.Context(), messages.UserText(input), opts...) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func eventsOf[T messages.Event](evs []messages.Event) []T {
	var out []T
	for _, ev := range evs {
		if e, ok := ev.(T); ok {
			out = append(out, e)
		}
	}
	return out
}

func TestSpawnAgent_ParallelChildren(t *testing.T) {
	const n = 5
	gate := newBarrier(n)
	f := newFixture(t, fanOutScript(n), []toolsys.Tool{gate.tool()}, func(c *actors.Config) {
		c.SubAgents = actors.SubAgents{Enabled: true}
	})
	evs := collect(t, f.sess, "fan out")
	end := eventsOf[messages.TurnEnded](evs)
	if len(end) != 1 || end[0].Outcome != messages.OutcomeCompleted || end[0].Text != "summary" {
		t.Fatalf("turn ended with %+v", end)
	}
	if got := gate.max(); got != n {
		t.Errorf("max concurrent sub-agents = %d, want %d", got, n)
	}
	finished := eventsOf[messages.ToolFinished](evs)
	if len(finished) != n {
		t.Fatalf("%d tool calls finished, want %d", len(finished), n)
	}
	for _, tf := range finished {
		if tf.IsError || tf.Content != "found it" {
			t.Errorf("spawn %s = %q (error %v)", tf.CallID, tf.Content, tf.IsError)
		}
	}
	started := eventsOf[messages.SubAgentStarted](evs)
	ended := eventsOf[messages.SubAgentEnded](evs)
	if len(started) != n || len(ended) != n {
		t.Fatalf("%d SubAgentStarted and %d SubAgentEnded, want %d each", len(started), len(ended), n)
	}
	for _, s := range started {
		if s.Depth != 1 || !strings.HasPrefix(s.Child, "s1:sub:") {
			t.Errorf("SubAgentStarted = %+v", s)
		}
	}
}

func TestSpawnAgent_UsageRollUp(t *testing.T) {
	const n = 3
	gate := newBarrier(1)
	f := newFixture(t, fanOutScript(n), []toolsys.Tool{gate.tool()}, func(c *actors.Config) {
		c.SubAgents = actors.SubAgents{Enabled: true}
	})
	evs := collect(t, f.sess, "fan out")
	// Each child made two model calls; the parent made two.
	child := usage15.Add(*usage15)
	own := usage15.Add(*usage15)
	var sumEnded messages.Usage
	for _, e := range eventsOf[messages.SubAgentEnded](evs) {
		if e.Usage != child {
			t.Errorf("SubAgentEnded %s usage = %+v, want %+v", e.Child, e.Usage, child)
		}
		sumEnded = sumEnded.Add(e.Usage)
	}
	total := own.Add(sumEnded)
	if want := (messages.Usage{PromptTokens: 80, CompletionTokens: 40, TotalTokens: 120}); total != want {
		t.Fatalf("own + sub-agents = %+v, want %+v", total, want)
	}
	st, err := f.sess.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Usage != total {
		t.Errorf("Status.Usage = %+v, want %+v", st.Usage, total)
	}
	rep, err := f.sess.Usage(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Own != own || rep.Total != total || len(rep.SubAgents) != n {
		t.Errorf("Usage() = %+v", rep)
	}
	for _, sa := range rep.SubAgents {
		if sa.Usage != child || sa.Outcome != messages.OutcomeCompleted || sa.Agent != "subagent" {
			t.Errorf("sub-agent usage = %+v", sa)
		}
		sub, err := f.rt.Open(t.Context(), sa.Child)
		if err != nil {
			t.Fatal(err)
		}
		subRep, err := sub.Usage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if subRep.Total != sa.Usage {
			t.Errorf("child %s total = %+v, parent recorded %+v", sa.Child, subRep.Total, sa.Usage)
		}
	}
	if got := f.rt.Usage().Usage; got != total {
		t.Errorf("runtime usage = %+v, want %+v", got, total)
	}
	var lastReported messages.Usage
	for _, u := range eventsOf[messages.UsageReported](evs) {
		lastReported = u.SessionUsage
	}
	if lastReported != total {
		t.Errorf("last UsageReported.SessionUsage = %+v, want %+v", lastReported, total)
	}
}
