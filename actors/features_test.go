package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/supervisor"
	"github.com/agcore/agcore/toolsys"
)

func TestHooks_OrderAndEffects(t *testing.T) {
	rec := &recorder{}
	var seenArgs string
	echo := &funcTool{name: "echo", perm: toolsys.PermReadOnly, fn: func(_ context.Context, args json.RawMessage) (toolsys.Result, error) {
		seenArgs = string(args)
		return toolsys.Result{Content: "ok"}, nil
	}}
	f := newFixture(t, toolScript("done", scripted.ToolCall{Name: "echo", Arguments: `{"a":1}`}), []toolsys.Tool{echo}, func(c *actors.Config) {
		for _, ev := range []actors.HookEvent{actors.OnTurnStart, actors.PreRequest, actors.PostRequest, actors.PostToolUse, actors.OnTurnEnd} {
			c.Hooks.Register(ev, rec.hook(actors.HookResult{}))
		}
		c.Hooks.Register(actors.PreToolUse, rec.hook(actors.HookResult{Arguments: `{"a":2}`}))
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("go")); err != nil {
		t.Fatal(err)
	}
	want := []actors.HookEvent{actors.OnTurnStart, actors.PreRequest, actors.PostRequest, actors.PreToolUse, actors.PostToolUse,
		actors.PreRequest, actors.PostRequest, actors.OnTurnEnd}
	if got := rec.events(); !slices.Equal(got, want) {
		t.Fatalf("hook order = %v, want %v", got, want)
	}
	if seenArgs != `{"a":2}` {
		t.Errorf("tool saw %s, want the rewritten arguments", seenArgs)
	}
	if end := rec.last(actors.OnTurnEnd); end.Outcome != messages.OutcomeCompleted || end.Turn != 0 || end.Session != "s1" {
		t.Errorf("OnTurnEnd context = %+v", end)
	}
	if post := rec.last(actors.PostRequest); post.Response == nil || post.Response.Message.Text() != "done" {
		t.Errorf("PostRequest response = %+v", post.Response)
	}
}

func TestHooks_Block(t *testing.T) {
	t.Run("pre-request", func(t *testing.T) {
		rec := &recorder{}
		f := newFixture(t, textScript("x"), nil, func(c *actors.Config) {
			c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{Block: true, Reason: "over budget"}))
			c.Hooks.Register(actors.OnError, rec.hook(actors.HookResult{}))
		})
		_, err := f.sess.Submit(t.Context(), messages.UserText("hi"))
		var te *actors.TurnError
		if !errors.As(err, &te) || te.Outcome != messages.OutcomeFailed || !strings.Contains(te.Reason, "over budget") {
			t.Fatalf("err = %v, want a failed turn blocked by the hook", err)
		}
		if f.prov.Calls() != 0 || rec.last(actors.OnError) != nil {
			t.Errorf("provider calls = %d, OnError fired = %v; want 0 and no", f.prov.Calls(), rec.last(actors.OnError) != nil)
		}
	})
	t.Run("pre-tool-use", func(t *testing.T) {
		ran := false
		echo := &funcTool{name: "echo", fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
			ran = true
			return toolsys.Result{}, nil
		}}
		f := newFixture(t, toolScript("done", scripted.ToolCall{Name: "echo", Arguments: "{}"}), []toolsys.Tool{echo}, func(c *actors.Config) {
			c.Hooks.Register(actors.PreToolUse, actors.HookFunc(func(context.Context, *actors.HookContext) actors.HookResult {
				return actors.HookResult{Block: true, Reason: "not today"}
			}))
		})
		res, err := f.sess.Submit(t.Context(), messages.UserText("go"))
		if err != nil {
			t.Fatal(err)
		}
		if ran || len(res.ToolCalls) != 1 || !res.ToolCalls[0].IsError || !strings.Contains(res.ToolCalls[0].Content, "not today") {
			t.Fatalf("ran=%v calls=%+v", ran, res.ToolCalls)
		}
	})
}

func TestHooks_RetryAndError(t *testing.T) {
	tests := []struct {
		name        string
		failure     scripted.FailureKind
		wantRetries int
		wantErrors  int
		wantFailed  bool
	}{
		{"server error is retried", scripted.FailServer, 1, 0, false},
		{"auth error fails at once", scripted.FailAuth, 0, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := textScript("fine")
			script.Failures = []scripted.Injection{{Calls: []int{1}, Failure: scripted.Failure{Kind: tt.failure}}}
			rec := &recorder{}
			f := newFixture(t, script, nil, func(c *actors.Config) {
				c.Retry.Sleep = func(context.Context, time.Duration) error { return nil }
				c.Hooks.Register(actors.OnRetry, rec.hook(actors.HookResult{}))
				c.Hooks.Register(actors.OnError, rec.hook(actors.HookResult{}))
			})
			res, err := f.sess.Submit(t.Context(), messages.UserText("hi"))
			if failed := err != nil; failed != tt.wantFailed {
				t.Fatalf("err = %v, res = %+v", err, res)
			}
			var retries, errs int
			for _, ev := range rec.events() {
				switch ev {
				case actors.OnRetry:
					retries++
				case actors.OnError:
					errs++
				}
			}
			if retries != tt.wantRetries || errs != tt.wantErrors {
				t.Fatalf("OnRetry %d, OnError %d; want %d, %d", retries, errs, tt.wantRetries, tt.wantErrors)
			}
			if tt.wantRetries > 0 && rec.last(actors.OnRetry).Attempt != 1 {
				t.Errorf("OnRetry attempt = %d, want 1", rec.last(actors.OnRetry).Attempt)
			}
		})
	}
}

func TestAgentSwitch(t *testing.T) {
	rec := &recorder{}
	f := newFixture(t, textScript("ok"), nil, func(c *actors.Config) {
		c.EnvironmentPrompt = true
		c.BasePrompt = "Base for {{.Product}}."
		c.PromptVars = map[string]any{"Product": "agcore"}
		c.Agents = []actors.AgentProfile{
			{Name: "planner", Prompt: "You plan. Style: {{.Style}}.", Vars: map[string]any{"Style": "terse"}},
			{Name: "coder", Prompt: "You write code in session {{.Session}}."},
			{Name: "broken", Prompt: "Uses {{.Undefined}}."},
		}
		c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("plan")); err != nil {
		t.Fatal(err)
	}
	sys := rec.last(actors.PreRequest).Request.Messages[0].Text()
	if !strings.Contains(sys, "Base for agcore.") || !strings.Contains(sys, "You plan. Style: terse.") || !strings.Contains(sys, "<environment>") {
		t.Fatalf("planner prompt = %q", sys)
	}
	if err := f.sess.SwitchAgent(t.Context(), "nobody"); !errors.Is(err, actors.ErrUnknownAgent) {
		t.Fatalf("switch to unknown = %v", err)
	}
	if err := f.sess.SwitchAgent(t.Context(), "coder"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sess.Submit(t.Context(), messages.UserText("code")); err != nil {
		t.Fatal(err)
	}
	sys = rec.last(actors.PreRequest).Request.Messages[0].Text()
	if !strings.Contains(sys, "You write code in session s1.") || !strings.Contains(sys, `taking over this conversation from the "planner" agent`) {
		t.Fatalf("coder prompt = %q", sys)
	}
	if st, _ := f.sess.Status(t.Context()); st.Agent != "coder" {
		t.Errorf("status agent = %q", st.Agent)
	}
	if err := f.sess.SwitchAgent(t.Context(), "broken"); err != nil {
		t.Fatal(err)
	}
	_, err := f.sess.Submit(t.Context(), messages.UserText("x"))
	var te *actors.TurnError
	if !errors.As(err, &te) || !strings.Contains(te.Reason, "Undefined") {
		t.Fatalf("missing template variable: err = %v", err)
	}
}

func TestCompaction_BySize(t *testing.T) {
	big := &funcTool{name: "big", perm: toolsys.PermReadOnly, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{Content: strings.Repeat("lorem ipsum ", 200)}, nil
	}}
	compacted := make(chan *messages.ContextCompacted, 1)
	f := newFixture(t, toolScript("done", scripted.ToolCall{Name: "big", Arguments: "{}"}), []toolsys.Tool{big}, func(c *actors.Config) {
		c.Compaction.Config = memory.CompactionConfig{ContextWindow: 500, ReservedOutput: -1, Buffer: -1, KeepRecent: 1}
		c.Hooks.Register(actors.OnCompact, actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
			compacted <- hc.Compaction
			return actors.HookResult{}
		}))
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("go")); err != nil {
		t.Fatal(err)
	}
	ev := <-compacted
	if ev.Kind != "micro" || ev.TokensAfter >= ev.TokensBefore {
		t.Fatalf("compaction = %+v", ev)
	}
	res, err := f.sess.Submit(t.Context(), messages.UserText("go"))
	if err != nil || res.Outcome != messages.OutcomeCompleted {
		t.Fatalf("turn after compaction = %+v, %v", res, err)
	}
}

func TestCompaction_ContextLengthErrorRetriesOnce(t *testing.T) {
	script := scripted.Script{
		Rules: []scripted.Rule{
			{Name: "summary", Match: scripted.Match{Regexp: `(?m)^user: `}, Reply: scripted.Reply{Text: "the user greeted twice"}},
			{Name: "chat", Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "hello"}},
		},
		// Call 2 is the model call of the second turn.
		Failures: []scripted.Injection{{Calls: []int{2}, Failure: scripted.Failure{Kind: scripted.FailContextLength}}},
	}
	rec := &recorder{}
	f := newFixture(t, script, nil, func(c *actors.Config) {
		c.Model = "default/chat-model"
		c.Compaction.SummaryModel = "default/cheap-model"
		c.Compaction.Config = memory.CompactionConfig{KeepRecent: 1}
		c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("hi")); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for ev, err := range f.sess.Stream(t.Context(), messages.UserText("hi again")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case messages.ContextCompacted:
			kinds = append(kinds, e.Kind)
		case messages.TurnEnded:
			if e.Outcome != messages.OutcomeCompleted || e.Text != "hello" {
				t.Fatalf("turn ended %+v", e)
			}
		}
	}
	if !slices.Equal(kinds, []string{"summary"}) {
		t.Fatalf("compactions = %v, want one summary", kinds)
	}
	msgs := conversation(rec.last(actors.PreRequest).Request.Messages)
	if !strings.HasPrefix(msgs[0].Text(), memory.SummaryPrefix+"the user greeted twice") {
		t.Fatalf("retried request starts with %q, want the summary", msgs[0].Text())
	}
	if f.prov.Calls() != 4 {
		t.Errorf("provider calls = %d, want 4 (turn 1, failed call, summary, retry)", f.prov.Calls())
	}
}

func TestSupervision_RestartRebuildsFromJournal(t *testing.T) {
	rec := &recorder{}
	f := newFixture(t, textScript("ok"), nil, func(c *actors.Config) {
		c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("remember me")); err != nil {
		t.Fatal(err)
	}
	before, _ := f.sess.Status(t.Context())
	if err := f.sess.Fault(errors.New("bug in the session")); err != nil {
		t.Fatal(err)
	}
	after, err := f.sess.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after.Activation != before.Activation+1 || after.NextTurn != 1 || after.Messages != 2 {
		t.Fatalf("after restart status = %+v (before %+v)", after, before)
	}
	if _, err := f.sess.Submit(t.Context(), messages.UserText("second")); err != nil {
		t.Fatal(err)
	}
	msgs := conversation(rec.last(actors.PreRequest).Request.Messages)
	if len(msgs) != 3 || msgs[0].Text() != "remember me" {
		t.Fatalf("request after restart = %+v, want the rebuilt history", msgs)
	}
}

// conversation returns the messages of a request after its system prompt,
// if it has one.
func conversation(msgs []messages.Message) []messages.Message {
	if len(msgs) > 0 && msgs[0].Role == messages.RoleSystem {
		return msgs[1:]
	}
	return msgs
}

// flakyJournal fails Append and Activate once broken is set.
type flakyJournal struct {
	memory.Journal
	broken chan struct{}
}

var errDisk = errors.New("disk on fire")

func (j *flakyJournal) isBroken() bool {
	select {
	case <-j.broken:
		return true
	default:
		return false
	}
}

func (j *flakyJournal) Append(ctx context.Context, s string, act, tail uint64, evs ...messages.JournalEvent) (uint64, error) {
	if j.isBroken() {
		return 0, errDisk
	}
	return j.Journal.Append(ctx, s, act, tail, evs...)
}

func (j *flakyJournal) Activate(ctx context.Context, s, node string) (uint64, uint64, error) {
	if j.isBroken() {
		return 0, 0, errDisk
	}
	return j.Journal.Activate(ctx, s, node)
}

func TestSupervision_BudgetExhaustedStopsSession(t *testing.T) {
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		t.Fatal(err)
	}
	fj := &flakyJournal{Journal: j, broken: make(chan struct{})}
	rt, err := actors.New(actors.Config{Journal: fj, Provider: scripted.MustNew(textScript("ok"), scripted.Options{}),
		RestartBudget: supervisor.BudgetOptions{MaxFailures: 2, Window: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	sess, err := rt.Open(t.Context(), "doomed")
	if err != nil {
		t.Fatal(err)
	}
	close(fj.broken)
	_, err = sess.Submit(t.Context(), messages.UserText("hi"))
	var se *actors.SessionStoppedError
	if !errors.As(err, &se) || !errors.Is(err, supervisor.ErrBudgetExhausted) || !errors.Is(err, errDisk) {
		t.Fatalf("Submit err = %v, want the session stopped with an exhausted budget caused by the journal", err)
	}
}
