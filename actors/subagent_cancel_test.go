package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// TestSpawnAgent_CancelRollsUpUsage cancels a turn while a grandchild
// works: each of the three sessions (s1, its sub-agent and that one's
// sub-agent) made one model call of usage15. Every token counts in every
// ancestor's subtree and in s1's total, journaled, so a restarted runtime
// reports the same.
func TestSpawnAgent_CancelRollsUpUsage(t *testing.T) {
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Exact: "tree"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{spawnCall("branch")}, Usage: usage15}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "branch"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{spawnCall("leaf work")}, Usage: usage15}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "leaf"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "hold", Arguments: "{}"}}, Usage: usage15}},
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "done", Usage: usage15}},
	}}
	entered := make(chan struct{}, 1)
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
		_, err := sess.Submit(ctx, messages.UserText("tree"))
		ended <- err
	}()
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("the leaf never started")
	}
	if ok, err := sess.Cancel(ctx); err != nil || !ok {
		t.Fatalf("Cancel = %v, %v", ok, err)
	}
	if te, ok := errors.AsType[*actors.TurnError](<-ended); !ok || te.Outcome != messages.OutcomeCancelled {
		t.Fatalf("Submit = %v, want a cancelled turn", te)
	}

	want := messages.Usage{PromptTokens: 30, CompletionTokens: 15, TotalTokens: 45}
	check := func(rt *actors.Runtime, when string) {
		t.Helper()
		sess, err := rt.Open(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := sess.Usage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Total != want || rep.Own != *usage15 || len(rep.SubAgents) != 1 {
			t.Fatalf("%s: s1's usage = %+v, want a total of %+v", when, rep, want)
		}
		branch := rep.SubAgents[0]
		if branch.Outcome != messages.OutcomeCancelled || branch.Usage != usage15.Add(*usage15) || branch.RoundTrips != 2 {
			t.Errorf("%s: the branch's subtree = %+v, want cancelled with 2 calls of usage15", when, branch)
		}
		st, err := sess.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Usage != want || st.RoundTrips != 3 {
			t.Errorf("%s: Status usage = %+v in %d round trips, want %+v in 3", when, st.Usage, st.RoundTrips, want)
		}
		if got, _ := treeUsage(t, rt.Journal(), "s1"); got != want {
			t.Errorf("%s: the journals hold %+v of model calls, want %+v", when, got, want)
		}
		leaf := 0
		for entry, err := range rt.Journal().Read(ctx, branch.Child, 1) {
			if err != nil {
				t.Fatal(err)
			}
			if f, ok := entry.Event.(messages.SubAgentFinished); ok {
				leaf++
				if f.Outcome != messages.OutcomeCancelled || f.Usage != *usage15 {
					t.Errorf("%s: the leaf finished %+v, want cancelled with usage15", when, f)
				}
			}
		}
		if leaf != 1 {
			t.Errorf("%s: the branch journaled %d leaf results, want 1", when, leaf)
		}
	}
	check(rt, "after the cancel")
	if got := rt.Usage().Usage; got != want {
		t.Errorf("the runtime's model calls = %+v, want %+v", got, want)
	}
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rt = start()
	defer rt.Shutdown(context.Background())
	check(rt, "after a restart")
}
