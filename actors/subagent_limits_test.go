package actors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// toolResults records the tool results of every session through a
// PostToolUse hook.
type toolResults struct {
	mu  sync.Mutex
	got []actors.HookContext
}

func (r *toolResults) hook() actors.Hook {
	return actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
		r.mu.Lock()
		defer r.mu.Unlock()
		cp := *hc
		res := *hc.Result
		cp.Result = &res
		r.got = append(r.got, cp)
		return actors.HookResult{}
	})
}

// find returns the first result of tool in a session at depth (the number
// of ":sub:" in its id).
func (r *toolResults) find(tool string, depth int) (toolsys.Result, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, hc := range r.got {
		if hc.Call.Name == tool && strings.Count(hc.Session, ":sub:") == depth {
			return *hc.Result, true
		}
	}
	return toolsys.Result{}, false
}

func TestSpawnAgent_DepthLimit(t *testing.T) {
	// Every sub-agent spawns another one, until the depth limit refuses.
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "dig"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{spawnCall("dig deeper")}}},
		{Match: scripted.Match{Tool: actors.SpawnAgentToolName}, Reply: scripted.Reply{Text: "reported"}},
	}}
	tests := []struct {
		name     string
		maxDepth int
		want     int // the depth of the first session whose spawn is refused
	}{
		{"default of 3", 0, 3},
		{"one level", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &toolResults{}
			f := newFixture(t, script, nil, func(c *actors.Config) {
				c.SubAgents = actors.SubAgents{Enabled: true, MaxDepth: tt.maxDepth}
				c.Hooks.Register(actors.PostToolUse, rec.hook())
			})
			res, err := f.sess.Submit(t.Context(), messages.UserText("dig"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "reported" {
				t.Fatalf("turn = %+v", res)
			}
			for d := range tt.want {
				if r, ok := rec.find(actors.SpawnAgentToolName, d); !ok || r.IsError {
					t.Errorf("spawn at depth %d = %+v, %v; want a success", d, r, ok)
				}
			}
			r, ok := rec.find(actors.SpawnAgentToolName, tt.want)
			if !ok || !r.IsError || !strings.Contains(r.Content, fmt.Sprintf("maximum sub-agent depth of %d", tt.want)) {
				t.Errorf("spawn at depth %d = %+v; want the depth limit error", tt.want, r)
			}
			if _, deeper := rec.find(actors.SpawnAgentToolName, tt.want+1); deeper {
				t.Errorf("a session deeper than %d ran", tt.want)
			}
		})
	}
}

func TestSpawnAgent_BudgetExhausted(t *testing.T) {
	// The sub-agent calls work forever, 100 tokens a reply, on a budget of
	// 150 tokens: its second reply exhausts it.
	u100 := &messages.Usage{PromptTokens: 90, CompletionTokens: 10, TotalTokens: 100}
	spawn := scripted.ToolCall{Name: actors.SpawnAgentToolName, Arguments: `{"system_prompt":"You work.","tools":["work"],"task":"costly task","budget":{"max_tokens":150}}`}
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Exact: "delegate"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{spawn}}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "costly"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "work", Arguments: "{}"}}, Usage: u100}},
		{Match: scripted.Match{Tool: "work"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "work", Arguments: "{}"}}, Usage: u100}},
		{Match: scripted.Match{Tool: actors.SpawnAgentToolName}, Reply: scripted.Reply{Text: "the helper ran out of budget"}},
	}}
	rec := &recorder{}
	f := newFixture(t, script, []toolsys.Tool{echoTool("work")}, func(c *actors.Config) {
		c.SubAgents = actors.SubAgents{Enabled: true}
		c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
	})
	res, err := f.sess.Submit(t.Context(), messages.UserText("delegate"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 {
		t.Fatalf("tool calls = %+v", res.ToolCalls)
	}
	want := "sub-agent s1:sub:call_1_1 stopped: budget of 150 tokens exhausted (used 200)"
	if tc := res.ToolCalls[0]; !tc.IsError || tc.Content != want {
		t.Errorf("spawn result = %q (error %v), want %q", tc.Content, tc.IsError, want)
	}
	if res.Text != "the helper ran out of budget" {
		t.Errorf("final text = %q", res.Text)
	}
	last := rec.last(actors.PreRequest)
	if msgs := last.Request.Messages; msgs[len(msgs)-1].Text() != want {
		t.Errorf("the parent's model read %q, want %q", msgs[len(msgs)-1].Text(), want)
	}
	rep, err := f.sess.Usage(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.SubAgents) != 1 || rep.SubAgents[0].Usage.TotalTokens != 200 || rep.SubAgents[0].Outcome != messages.OutcomeLimit {
		t.Errorf("sub-agent usage = %+v", rep.SubAgents)
	}
}

// manualClock is a clock whose timers fire when the test says.
type manualClock struct {
	mu     sync.Mutex
	timers map[time.Duration][]func()
	armed  chan time.Duration
}

func newManualClock() *manualClock {
	return &manualClock{timers: map[time.Duration][]func(){}, armed: make(chan time.Duration, 64)}
}

func (c *manualClock) Now() time.Time { return time.Unix(1_700_000_000, 0) }

func (c *manualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	c.timers[d] = append(c.timers[d], f)
	c.mu.Unlock()
	select {
	case c.armed <- d:
	default:
	}
	return func() bool { return true }
}

// has reports whether a timer is armed for d.
func (c *manualClock) has(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers[d]) > 0
}

// fire runs the timers armed for d.
func (c *manualClock) fire(d time.Duration) {
	c.mu.Lock()
	fs := c.timers[d]
	delete(c.timers, d)
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

func TestSpawnAgent_WallTimeBudget(t *testing.T) {
	spawn := scripted.ToolCall{Name: actors.SpawnAgentToolName, Arguments: `{"system_prompt":"You wait.","tools":["hold"],"task":"slow task","budget":{"max_seconds":2}}`}
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Exact: "delegate"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{spawn}}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "slow"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "hold", Arguments: "{}"}}}},
		{Match: scripted.Match{Tool: actors.SpawnAgentToolName}, Reply: scripted.Reply{Text: "too slow"}},
	}}
	entered := make(chan struct{}, 1)
	clock := newManualClock()
	var armedFirst atomic.Bool
	hold := &funcTool{name: "hold", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		// The wall-time budget bounds every step of the task, this one
		// included: its timer is armed before the task starts.
		armedFirst.Store(clock.has(2 * time.Second))
		entered <- struct{}{}
		<-ctx.Done()
		return toolsys.Result{}, ctx.Err()
	}}
	f := newFixture(t, script, []toolsys.Tool{hold}, func(c *actors.Config) {
		c.SubAgents = actors.SubAgents{Enabled: true}
		c.Clock = clock
	})
	done := make(chan *actors.TurnResult, 1)
	go func() {
		res, err := f.sess.Submit(context.Background(), messages.UserText("delegate"))
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case <-entered:
	case <-t.Context().Done():
		t.Fatal("the sub-agent never called hold")
	}
	if !armedFirst.Load() {
		t.Fatal("the sub-agent's task ran before its wall-time budget was armed")
	}
	clock.fire(2 * time.Second)
	res := <-done
	want := "sub-agent s1:sub:call_1_1 stopped: budget of 2s wall time exhausted"
	if len(res.ToolCalls) != 1 || !res.ToolCalls[0].IsError || res.ToolCalls[0].Content != want {
		t.Fatalf("tool calls = %+v, want %q", res.ToolCalls, want)
	}
}

func TestSpawnAgent_CancelStopsSubtree(t *testing.T) {
	// protoactor's dead-letter throttle keeps a timer goroutine for one
	// period after a message reaches a stopped actor; it is not ours.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
	// Two sub-agents each spawn a sub-agent that holds until cancelled.
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Exact: "tree"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{spawnCall("branch a"), spawnCall("branch b")}}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "branch"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{spawnCall("leaf work")}}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "leaf"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "hold", Arguments: "{}"}}}},
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "done"}},
	}}
	entered, left := make(chan string, 2), make(chan string, 2)
	hold := &funcTool{name: "hold", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		entered <- "in"
		<-ctx.Done()
		left <- "out"
		return toolsys.Result{}, ctx.Err()
	}}
	reg := toolsys.NewRegistry(toolsys.Config{})
	reg.MustRegister(hold)
	rt, err := actors.NewInMemory(actors.Config{Provider: scripted.MustNew(script, scripted.Options{}), Tools: reg,
		SubAgents: actors.SubAgents{Enabled: true}, Limits: actors.Limits{ToolTimeout: -1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sess, err := rt.Open(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan messages.TurnEnded, 1)
	go func() {
		for ev, err := range sess.Stream(ctx, messages.UserText("tree")) {
			if err != nil {
				t.Error(err)
				close(ended)
				return
			}
			if e, ok := ev.(messages.TurnEnded); ok {
				ended <- e
			}
		}
	}()
	for range 2 {
		select {
		case <-entered:
		case <-ctx.Done():
			t.Fatal("the leaves never started")
		}
	}
	if ok, err := sess.Cancel(ctx); err != nil || !ok {
		t.Fatalf("Cancel = %v, %v", ok, err)
	}
	if e := <-ended; e.Outcome != messages.OutcomeCancelled {
		t.Fatalf("turn ended %+v", e)
	}
	for range 2 {
		select {
		case <-left:
		case <-ctx.Done():
			t.Fatal("a leaf was not cancelled")
		}
	}
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
