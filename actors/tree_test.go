package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// TestTree_MidTurn takes the tree while s1's turn runs a hold call beside a
// spawn_agent call whose sub-agent runs a hold call of its own: both
// sessions are running, each shows its calls in flight, the sub-agent is
// nested under s1 and named by the spawn call, and the services are there.
// Once the turn is cancelled, s1 is idle with nothing in flight; after a
// restart, a stored session that is not active is listed as passivated.
func TestTree_MidTurn(t *testing.T) {
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Exact: "work"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			{ID: "c-hold", Name: "hold", Arguments: "{}"}, spawnCall("child task")}}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "child task"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			{ID: "c-child-hold", Name: "hold", Arguments: "{}"}}}},
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "done"}},
	}}
	entered := make(chan struct{}, 2)
	hold := &funcTool{name: "hold", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		entered <- struct{}{}
		<-ctx.Done()
		return toolsys.Result{}, ctx.Err()
	}}
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	start := func() *actors.Runtime {
		reg := toolsys.NewRegistry(toolsys.Config{})
		reg.MustRegister(hold)
		rt, err := actors.New(actors.Config{Store: store, Provider: scripted.MustNew(script, scripted.Options{}), Tools: reg,
			SubAgents: actors.SubAgents{Enabled: true}, Limits: actors.Limits{ToolTimeout: -1}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	rt := start()
	sess, err := rt.Open(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := sess.Submit(ctx, messages.UserText("work"))
		ended <- err
	}()
	for range 2 {
		select {
		case <-entered:
		case <-ctx.Done():
			t.Fatal("the hold calls never started")
		}
	}

	tree, err := rt.Tree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Sessions) != 1 {
		t.Fatalf("Sessions = %+v, want s1 alone at the top (its sub-agent nested)", tree.Sessions)
	}
	s1 := tree.Sessions[0]
	if s1.ID != "s1" || s1.State != actors.SessionRunning || s1.Turn != 0 || s1.TurnID == "" || s1.ModelCall {
		t.Fatalf("s1 = %+v, want running turn 0 with no model call in flight", s1)
	}
	if len(s1.ToolCalls) != 2 || s1.ToolCalls[0].ID != "c-hold" || s1.ToolCalls[0].Name != "hold" ||
		s1.ToolCalls[1].Name != actors.SpawnAgentToolName || s1.ToolCalls[1].SubAgent == "" {
		t.Fatalf("s1 tool calls = %+v, want hold and spawn_agent naming its sub-agent", s1.ToolCalls)
	}
	if len(s1.SubAgents) != 1 {
		t.Fatalf("s1 sub-agents = %+v, want one", s1.SubAgents)
	}
	child := s1.SubAgents[0]
	if child.ID != s1.ToolCalls[1].SubAgent || child.State != actors.SessionRunning ||
		len(child.ToolCalls) != 1 || child.ToolCalls[0].ID != "c-child-hold" {
		t.Fatalf("sub-agent = %+v, want %s running its hold call", child, s1.ToolCalls[1].SubAgent)
	}
	kinds := map[string]bool{}
	for _, s := range tree.Services {
		kinds[s.Kind] = true
	}
	if !kinds[actors.ServiceCompactor] || !kinds[actors.ServiceRetriever] || kinds[actors.ServiceScheduler] {
		t.Fatalf("services = %+v, want the compactor and the retriever, and no scheduler without schedules", tree.Services)
	}

	if ok, err := sess.Cancel(ctx); err != nil || !ok {
		t.Fatalf("Cancel = %v, %v", ok, err)
	}
	if te, ok := errors.AsType[*actors.TurnError](<-ended); !ok || te.Outcome != messages.OutcomeCancelled {
		t.Fatalf("Submit = %v, want a cancelled turn", te)
	}
	// The turn has ended; its sub-agent, told to stop, reports on its own
	// time.
	waitFor(t, func() bool {
		tree, err := rt.Tree(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tree.Sessions {
			if s.ID == "s1" {
				if s.State != actors.SessionIdle || len(s.ToolCalls) != 0 {
					t.Fatalf("s1 after cancel = %+v, want idle with no tool call", s)
				}
				return len(s.SubAgents) == 0
			}
		}
		return false
	})
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tree(ctx); !errors.Is(err, actors.ErrClosed) {
		t.Fatalf("Tree after Shutdown = %v, want ErrClosed", err)
	}

	rt = start()
	defer rt.Shutdown(context.Background())
	tree, err = rt.Tree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Sessions) != 0 || len(tree.Passivated) < 1 || tree.Passivated[0] != "s1" {
		t.Fatalf("tree of a fresh runtime = %+v, want no live session and s1 passivated", tree)
	}
}

// TestTree_RestartCount makes s1's actor fail once: its node counts the
// restart.
func TestTree_RestartCount(t *testing.T) {
	f := newFixture(t, textScript("hi"), nil, nil)
	ctx := t.Context()
	sess := f.sess
	if _, err := sess.Submit(ctx, messages.UserText("hello")); err != nil {
		t.Fatal(err)
	}
	if err := sess.Fault(errors.New("boom")); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Status(ctx); err != nil {
		t.Fatal(err)
	}
	tree, err := f.rt.Tree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Sessions) != 1 || tree.Sessions[0].Restarts != 1 {
		t.Fatalf("Sessions = %+v, want s1 with one restart", tree.Sessions)
	}
}

// TestTree_NotActivity takes the tree between the arming of s1's idle
// timer and its firing: the session still passivates (a console polling
// the tree does not keep sessions active), and the tree taken after lists
// it as passivated.
func TestTree_NotActivity(t *testing.T) {
	const idle = time.Hour
	clock := newManualClock()
	f := newFixture(t, textScript("hi"), nil, func(c *actors.Config) {
		c.IdleTimeout = idle
		c.Clock = clock
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("hello")); err != nil {
		t.Fatal(err)
	}
	armedFor(t, clock, idle)
	clock.fire(idle) // finds the turn's activity, and is armed again
	armedFor(t, clock, idle)
	tree, err := f.rt.Tree(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Sessions) != 1 || tree.Sessions[0].ID != "s1" || tree.Sessions[0].State != actors.SessionIdle {
		t.Fatalf("Sessions = %+v, want s1 idle", tree.Sessions)
	}
	clock.fire(idle)
	waitFor(t, func() bool { return !slices.Contains(f.rt.Sessions(), "s1") })
	tree, err = f.rt.Tree(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Sessions) != 0 || !slices.Equal(tree.Passivated, []string{"s1"}) {
		t.Fatalf("tree after passivation = %+v, want s1 passivated", tree)
	}
}

// BenchmarkTree takes the tree of a runtime with 1,000 idle live sessions.
func BenchmarkTree(b *testing.B) {
	rt, err := actors.NewInMemory(actors.Config{Provider: scripted.MustNew(textScript("hi"), scripted.Options{}), IdleTimeout: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	for i := range 1000 {
		if _, err := rt.Open(b.Context(), fmt.Sprintf("s%04d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		tree, err := rt.Tree(b.Context())
		if err != nil || len(tree.Sessions) != 1000 {
			b.Fatalf("Tree = %d sessions, %v", len(tree.Sessions), err)
		}
	}
}
