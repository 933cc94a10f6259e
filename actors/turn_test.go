package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// waitFor polls cond through the session's mailbox until it holds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		runtime.Gosched()
	}
}

func calls(name string, n int) []scripted.ToolCall {
	out := make([]scripted.ToolCall, n)
	for i := range out {
		out[i] = scripted.ToolCall{Name: name, Arguments: fmt.Sprintf(`{"i":%d}`, i)}
	}
	return out
}

func TestParallelTools_Overlap(t *testing.T) {
	for _, tt := range []struct{ calls, limit, want int }{{3, 0, 3}, {4, 2, 2}} {
		t.Run(fmt.Sprintf("%d calls limit %d", tt.calls, tt.limit), func(t *testing.T) {
			var active, peak atomic.Int32
			ready := make(chan struct{})
			var once sync.Once
			gate := &funcTool{name: "gate", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
				n := active.Add(1)
				defer active.Add(-1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				if int(n) == tt.want {
					once.Do(func() { close(ready) })
				}
				select {
				case <-ready:
					return toolsys.Result{Content: "ok"}, nil
				case <-ctx.Done():
					return toolsys.Result{}, ctx.Err()
				}
			}}
			f := newFixture(t, toolScript("done", calls("gate", tt.calls)...), []toolsys.Tool{gate}, func(c *actors.Config) {
				c.Limits.MaxParallelTools = tt.limit
			})
			res, err := f.sess.Submit(t.Context(), messages.UserText("go"))
			if err != nil {
				t.Fatal(err)
			}
			if got := int(peak.Load()); got != tt.want {
				t.Errorf("peak concurrency = %d, want %d", got, tt.want)
			}
			if len(res.ToolCalls) != tt.calls {
				t.Fatalf("tool calls = %d, want %d", len(res.ToolCalls), tt.calls)
			}
			for _, c := range res.ToolCalls {
				if c.IsError {
					t.Errorf("call %s failed: %s", c.CallID, c.Content)
				}
			}
		})
	}
}

func TestToolResults_InCallOrder(t *testing.T) {
	// Call i waits until the result of call i+1 has reached the session
	// (its PostToolUse hook ran), so results arrive in reverse.
	done := []chan struct{}{make(chan struct{}), make(chan struct{}), make(chan struct{})}
	index := func(args string) int {
		var a struct{ I int }
		_ = json.Unmarshal([]byte(args), &a)
		return a.I
	}
	ord := &funcTool{name: "ord", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, args json.RawMessage) (toolsys.Result, error) {
		i := index(string(args))
		if i+1 < len(done) {
			select {
			case <-done[i+1]:
			case <-ctx.Done():
				return toolsys.Result{}, ctx.Err()
			}
		}
		return toolsys.Result{Content: fmt.Sprintf("result %d", i)}, nil
	}}
	rec := &recorder{}
	f := newFixture(t, toolScript("done", calls("ord", 3)...), []toolsys.Tool{ord}, func(c *actors.Config) {
		c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
		c.Hooks.Register(actors.PostToolUse, actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
			close(done[index(hc.Call.Arguments)])
			return actors.HookResult{}
		}))
	})
	res, err := f.sess.Submit(t.Context(), messages.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{res.ToolCalls[0].CallID, res.ToolCalls[2].CallID}; got[0] != "call_1_3" || got[1] != "call_1_1" {
		t.Fatalf("finish order = %v, want call_1_3 first and call_1_1 last", got)
	}
	req := rec.last(actors.PreRequest).Request
	var tools []messages.Message
	for _, m := range req.Messages {
		if m.Role == messages.RoleTool {
			tools = append(tools, m)
		}
	}
	for i, m := range tools {
		if want := fmt.Sprintf("call_1_%d", i+1); m.ToolCallID != want || m.Text() != fmt.Sprintf("result %d", i) {
			t.Errorf("tool message %d = %s %q, want %s %q", i, m.ToolCallID, m.Text(), want, fmt.Sprintf("result %d", i))
		}
	}
	if err := messages.Validate(req.Messages[1:]); err != nil {
		t.Errorf("second request is not a valid conversation: %v", err)
	}
}

// panickyTools panics inside Call for the tool "explode", below the
// registry's own recovery, to exercise the supervisor path.
type panickyTools struct{ *toolsys.Registry }

func (p panickyTools) Call(ctx context.Context, name string, raw json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	if name == "explode" {
		panic("kaboom")
	}
	return p.Registry.Call(ctx, name, raw, tc)
}

func TestTool_FailuresBecomeErrorResults(t *testing.T) {
	boom := &funcTool{name: "boom", fn: func(context.Context, json.RawMessage) (toolsys.Result, error) { panic("nil map") }}
	fails := &funcTool{name: "fails", fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{}, errors.New("disk full")
	}}
	release := make(chan struct{})
	hang := &funcTool{name: "hang", fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		<-release // ignores its context
		return toolsys.Result{Content: "late"}, nil
	}}
	explode := echoTool("explode")
	script := toolScript("recovered",
		scripted.ToolCall{Name: "boom", Arguments: "{}"}, scripted.ToolCall{Name: "fails", Arguments: "{}"},
		scripted.ToolCall{Name: "hang", Arguments: "{}"}, scripted.ToolCall{Name: "explode", Arguments: "{}"},
		scripted.ToolCall{Name: "missing", Arguments: "{}"})
	f := newFixture(t, script, []toolsys.Tool{boom, fails, hang, explode}, func(c *actors.Config) {
		c.Limits.ToolTimeout = 50 * time.Millisecond
		c.Tools = panickyTools{c.Tools.(*toolsys.Registry)}
	})
	t.Cleanup(func() { close(release) }) // runs before the fixture's Shutdown
	res, err := f.sess.Submit(t.Context(), messages.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "recovered" {
		t.Fatalf("turn did not go on: %+v", res)
	}
	want := map[string]string{
		"boom":    "tool boom panicked: nil map",
		"fails":   "disk full",
		"hang":    "tool hang timed out after 50ms",
		"explode": "tool explode panicked: kaboom",
		"missing": `unknown tool "missing"`,
	}
	for _, c := range res.ToolCalls {
		if !c.IsError || !strings.Contains(c.Content, want[c.Name]) {
			t.Errorf("%s: is_error=%v content %q, want an error containing %q", c.Name, c.IsError, c.Content, want[c.Name])
		}
		delete(want, c.Name)
	}
	if len(want) != 0 {
		t.Errorf("missing results for %v", want)
	}
}

func TestCancel_DuringModelCall(t *testing.T) {
	entered := make(chan struct{}, 1)
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Contains: "slow"}, Reply: scripted.Reply{Text: "never", Latency: time.Hour}},
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "fine"}},
	}}
	prov := scripted.MustNew(script, scripted.Options{Sleep: func(ctx context.Context, _ time.Duration) error {
		entered <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}})
	f := newFixture(t, textScript("unused"), nil, func(c *actors.Config) { c.Provider = prov })
	errc := make(chan error, 1)
	go func() {
		_, err := f.sess.Submit(context.Background(), messages.UserText("slow please"))
		errc <- err
	}()
	<-entered
	if ok, err := f.sess.Cancel(t.Context()); err != nil || !ok {
		t.Fatalf("Cancel = %v, %v", ok, err)
	}
	var te *actors.TurnError
	if err := <-errc; !errors.As(err, &te) || te.Outcome != messages.OutcomeCancelled {
		t.Fatalf("Submit err = %v, want a cancelled TurnError", err)
	}
	res, err := f.sess.Submit(t.Context(), messages.UserText("again"))
	if err != nil || res.Text != "fine" || res.Turn != 1 {
		t.Fatalf("next turn = %+v, %v", res, err)
	}
}

func TestCancel_DuringTool(t *testing.T) {
	started, stopped := make(chan struct{}), make(chan struct{})
	block := &funcTool{name: "block", fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		close(started)
		<-ctx.Done()
		close(stopped)
		return toolsys.Result{}, ctx.Err()
	}}
	f := newFixture(t, toolScript("done", scripted.ToolCall{Name: "block", Arguments: "{}"}), []toolsys.Tool{block}, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := f.sess.Submit(context.Background(), messages.UserText("go"))
		errc <- err
	}()
	<-started
	if _, err := f.sess.Cancel(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-stopped // the tool's context was cancelled
	var te *actors.TurnError
	if err := <-errc; !errors.As(err, &te) || te.Outcome != messages.OutcomeCancelled {
		t.Fatalf("Submit err = %v, want cancelled", err)
	}
	st, err := f.sess.Status(t.Context())
	if err != nil || st.Running {
		t.Fatalf("status = %+v, %v", st, err)
	}
}

func TestLimits_MaxRoundTrips(t *testing.T) {
	script := scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true},
		Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "echo", Arguments: "{}"}}}}}}
	f := newFixture(t, script, []toolsys.Tool{echoTool("echo")}, func(c *actors.Config) { c.Limits.MaxRoundTrips = 3 })
	res, err := f.sess.Submit(t.Context(), messages.UserText("loop"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != messages.OutcomeLimit || res.RoundTrips != 3 || !strings.Contains(res.Reason, "3 model round trips") {
		t.Fatalf("result = %+v", res)
	}
}

func TestLimits_SessionTokens(t *testing.T) {
	f := newFixture(t, textScript("reply"), nil, func(c *actors.Config) { c.Limits.MaxTokens = 1 })
	if _, err := f.sess.Submit(t.Context(), messages.UserText("one")); err != nil {
		t.Fatal(err)
	}
	res, err := f.sess.Submit(t.Context(), messages.UserText("two"))
	if err != nil || res.Outcome != messages.OutcomeLimit || !strings.Contains(res.Reason, "budget") {
		t.Fatalf("second turn = %+v, %v", res, err)
	}
}

func TestMidTurnPolicies(t *testing.T) {
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "first"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "block", Arguments: "{}"}}}},
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "answered"}},
	}}
	for _, policy := range []actors.MidTurnPolicy{actors.MidTurnQueue, actors.MidTurnInterrupt, actors.MidTurnReject} {
		t.Run(policy.String(), func(t *testing.T) {
			started, release := make(chan struct{}), make(chan struct{})
			block := &funcTool{name: "block", fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
				close(started)
				select {
				case <-release:
					return toolsys.Result{Content: "released"}, nil
				case <-ctx.Done():
					return toolsys.Result{}, ctx.Err()
				}
			}}
			f := newFixture(t, script, []toolsys.Tool{block}, func(c *actors.Config) { c.Limits.MidTurn = policy })
			first := make(chan error, 1)
			go func() {
				_, err := f.sess.Submit(context.Background(), messages.UserText("first"))
				first <- err
			}()
			<-started
			second := make(chan *actors.TurnResult, 1)
			secondErr := make(chan error, 1)
			go func() {
				res, err := f.sess.Submit(context.Background(), messages.UserText("second"))
				second <- res
				secondErr <- err
			}()
			switch policy {
			case actors.MidTurnQueue:
				waitFor(t, func() bool { st, _ := f.sess.Status(t.Context()); return st.Queued == 1 })
				close(release)
				if err := <-first; err != nil {
					t.Fatalf("first: %v", err)
				}
				if res := <-second; res.Turn != 1 || res.Text != "answered" || <-secondErr != nil {
					t.Fatalf("second = %+v", res)
				}
			case actors.MidTurnInterrupt:
				var te *actors.TurnError
				if err := <-first; !errors.As(err, &te) || !strings.Contains(te.Reason, "interrupted") {
					t.Fatalf("first err = %v, want interrupted", err)
				}
				if res := <-second; res.Turn != 1 || res.Text != "answered" || <-secondErr != nil {
					t.Fatalf("second = %+v", res)
				}
			case actors.MidTurnReject:
				<-second
				if err := <-secondErr; !errors.Is(err, actors.ErrSessionBusy) {
					t.Fatalf("second err = %v, want ErrSessionBusy", err)
				}
				close(release)
				if err := <-first; err != nil {
					t.Fatalf("first: %v", err)
				}
			}
		})
	}
}

func TestSubmit_SameTurnIDNotRunTwice(t *testing.T) {
	f := newFixture(t, toolScript("done", scripted.ToolCall{Name: "echo", Arguments: "{}"}), []toolsys.Tool{echoTool("echo")}, nil)
	first, err := f.sess.Submit(t.Context(), messages.UserText("go"), actors.WithTurnID("t-1"))
	if err != nil {
		t.Fatal(err)
	}
	calls := f.prov.Calls()
	again, err := f.sess.Submit(t.Context(), messages.UserText("go"), actors.WithTurnID("t-1"))
	if err != nil {
		t.Fatal(err)
	}
	if f.prov.Calls() != calls || again.Text != first.Text || again.Turn != first.Turn || again.Outcome != first.Outcome {
		t.Fatalf("resubmission = %+v (provider calls %d -> %d), want %+v without new calls", again, calls, f.prov.Calls(), first)
	}
}
