package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/actors/plan"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// stepLog records OnPlanStepComplete calls.
type stepLog struct {
	mu    sync.Mutex
	steps []plan.Step
}

func (l *stepLog) hook(_ context.Context, _ *plan.Plan, s plan.Step) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, s)
}

func (l *stepLog) summary() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.steps {
		out = append(out, string(rune('0'+s.Index))+":"+s.Status.String())
	}
	return out
}

const fourStepPlan = "Here is the plan:\n```json\n" + `{"goal": "a report", "steps": [
 {"description": "collect the data"},
 {"description": "analyse part A", "depends_on": [0], "independent": true},
 {"description": "analyse part B", "depends_on": [0], "independent": true},
 {"description": "write the report", "depends_on": [1, 2]}]}` + "\n```"

func TestTaskAgent_Run(t *testing.T) {
	gate := newBarrier(2)
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "Your step (1 of 4)"}, Reply: scripted.Reply{Text: "data collected"}},
		{Match: scripted.Match{Role: messages.RoleUser, Regexp: `Your step \([23] of 4\)`}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "gate", Arguments: "{}"}}}},
		{Match: scripted.Match{Tool: "gate"}, Reply: scripted.Reply{Text: "analysis done"}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "Your step (4 of 4)"}, Reply: scripted.Reply{Text: "the report"}},
		{Match: scripted.Match{Role: messages.RoleUser, Regexp: "^Goal:"}, Reply: scripted.Reply{Text: fourStepPlan}},
	}}
	f := newFixture(t, script, []toolsys.Tool{gate.tool()}, nil)
	log := &stepLog{}
	ta, err := actors.NewTaskAgent(f.rt, actors.TaskAgentConfig{Session: "planner", OnPlanStepComplete: log.hook})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ta.Run(t.Context(), "write a report")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Done() || len(p.Failed()) != 0 || p.Goal != "a report" {
		t.Fatalf("plan = %+v", p)
	}
	wantResults := []string{"data collected", "analysis done", "analysis done", "the report"}
	for i, s := range p.Steps {
		if s.Status != plan.Completed || s.Result != wantResults[i] {
			t.Errorf("step %d = %s %q, want completed %q", i, s.Status, s.Result, wantResults[i])
		}
	}
	if got := gate.max(); got != 2 {
		t.Errorf("the independent steps reached a concurrency of %d, want 2", got)
	}
	got := log.summary()
	if len(got) != 4 || got[0] != "0:completed" || got[3] != "3:completed" || !slices.Contains(got, "1:completed") || !slices.Contains(got, "2:completed") {
		t.Errorf("hook calls = %v", got)
	}
}

func TestTaskAgent_ExecutePlan_FailureSkipsDependants(t *testing.T) {
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "break"}, Reply: scripted.Reply{Fail: &scripted.Failure{Kind: scripted.FailBadRequest}}},
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}},
	}}
	f := newFixture(t, script, nil, func(c *actors.Config) { c.Retry.MaxAttempts = 1 })
	log := &stepLog{}
	ta, err := actors.NewTaskAgent(f.rt, actors.TaskAgentConfig{Session: "runner", OnPlanStepComplete: log.hook})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.JSONParser{}.Parse(`["break things", {"description": "use the things", "depends_on": [0]}, "tidy up"]`)
	if err != nil {
		t.Fatal(err)
	}
	p, err = ta.ExecutePlan(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0:failed", "1:skipped", "2:completed"}; !slices.Equal(log.summary(), want) {
		t.Errorf("hook calls = %v, want %v", log.summary(), want)
	}
	if p.Steps[1].Error != "a step it depends on did not complete" || p.Steps[0].Error == "" {
		t.Errorf("step errors = %q, %q", p.Steps[0].Error, p.Steps[1].Error)
	}
	// A finished plan is not run again, and its steps do not move back.
	again, err := ta.ExecutePlan(t.Context(), p)
	if err != nil || len(log.summary()) != 3 || again.Steps[2].Status != plan.Completed {
		t.Errorf("re-executing a done plan: %v, hook calls %v", err, log.summary())
	}
	if err := p.Transition(2, plan.Running, "", p.Steps[2].Finished); !errors.Is(err, plan.ErrIllegalTransition) {
		t.Errorf("completed -> running = %v", err)
	}
	running, _ := plan.JSONParser{}.Parse(`["a", "b"]`)
	_ = running.Transition(0, plan.Running, "", p.Steps[2].Finished)
	if _, err := ta.ExecutePlan(t.Context(), running); !errors.Is(err, actors.ErrPlanStuck) {
		t.Errorf("a plan with a running step: %v, want ErrPlanStuck", err)
	}
}

func TestTaskAgent_MalformedPlan(t *testing.T) {
	tests := []struct {
		name, reply string
		want        []string // the error names these
	}{
		{"no json", "I would rather not plan.", []string{"plan"}},
		{"no steps", `{"goal": "g", "steps": []}`, []string{"steps", "no steps"}},
		{"missing steps", `{"goal": "g"}`, []string{"steps", "is missing"}},
		{"forward dependency", `{"steps": [{"description": "a", "depends_on": [1]}, {"description": "b"}]}`, []string{"step 0", "depends_on", "comes later"}},
		{"blank description", `{"steps": [{"description": "  "}]}`, []string{"step 0", "description", "blank"}},
		{"unknown field", `{"steps": [{"description": "a", "parallel": true}]}`, []string{"step 0", "parallel", "allowed fields"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, textScript(tt.reply), nil, nil)
			log := &stepLog{}
			ta, err := actors.NewTaskAgent(f.rt, actors.TaskAgentConfig{Session: "planner", OnPlanStepComplete: log.hook})
			if err != nil {
				t.Fatal(err)
			}
			_, err = ta.Run(t.Context(), "do it")
			var pe *plan.PlanError
			if !errors.As(err, &pe) || !errors.Is(err, plan.ErrInvalidPlan) {
				t.Fatalf("Run = %v, want a *plan.PlanError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if n := len(log.summary()); n != 0 {
				t.Errorf("%d steps ran from a malformed plan", n)
			}
		})
	}
}

func TestNewTaskAgent_Config(t *testing.T) {
	f := newFixture(t, textScript("x"), nil, nil)
	if _, err := actors.NewTaskAgent(f.rt, actors.TaskAgentConfig{Session: "a/b"}); !errors.Is(err, actors.ErrConfig) {
		t.Errorf("NewTaskAgent with a bad session id = %v, want ErrConfig", err)
	}
}

// TestTaskAgent_StepsAreChildren runs two independent steps as sub-agents
// that hold until cancelled, then cancels or deletes the task agent's
// session: either stops both steps, because they are its children.
func TestTaskAgent_StepsAreChildren(t *testing.T) {
	tests := []struct {
		name string
		stop func(ctx context.Context, rt *actors.Runtime, sess *actors.Session) error
	}{
		{"cancel", func(ctx context.Context, _ *actors.Runtime, sess *actors.Session) error {
			ok, err := sess.Cancel(ctx)
			if err == nil && !ok {
				err = errors.New("Cancel reported nothing to cancel")
			}
			return err
		}},
		{"delete", func(ctx context.Context, rt *actors.Runtime, sess *actors.Session) error {
			return rt.Delete(ctx, sess.ID())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := scripted.Script{Rules: []scripted.Rule{
				{Match: scripted.Match{Role: messages.RoleUser, Contains: "Your step"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "hold", Arguments: "{}"}}, Usage: usage15}},
				{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "held", Usage: usage15}},
			}}
			entered, left := make(chan struct{}, 2), make(chan struct{}, 2)
			hold := &funcTool{name: "hold", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
				entered <- struct{}{}
				<-ctx.Done()
				left <- struct{}{}
				return toolsys.Result{}, ctx.Err()
			}}
			f := newFixture(t, script, []toolsys.Tool{hold}, func(c *actors.Config) { c.Limits.ToolTimeout = -1 })
			ta, err := actors.NewTaskAgent(f.rt, actors.TaskAgentConfig{Session: "tasks"})
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.JSONParser{}.Parse(`[{"description": "hold a", "independent": true}, {"description": "hold b", "independent": true}]`)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			done := make(chan *plan.Plan, 1)
			go func() {
				p, err := ta.ExecutePlan(ctx, p)
				if err != nil {
					t.Error(err)
				}
				done <- p
			}()
			for range 2 {
				select {
				case <-entered:
				case <-ctx.Done():
					t.Fatal("the steps never started")
				}
			}
			sess, err := f.rt.Open(ctx, "tasks")
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.stop(ctx, f.rt, sess); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				select {
				case <-left:
				case <-ctx.Done():
					t.Fatal("a step went on after its task session stopped")
				}
			}
			p = <-done
			if p == nil || len(p.Failed()) != 2 {
				t.Fatalf("plan = %+v, want both steps failed", p)
			}
			if tt.name != "cancel" {
				return
			}
			// The steps' usage counts in the task session's.
			rep, err := sess.Usage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := treeUsage(t, f.rt.Journal(), "tasks")
			if len(rep.SubAgents) != 2 || rep.Total != want || want != usage15.Add(*usage15) {
				t.Errorf("task session usage = %+v, want the steps' %+v", rep, want)
			}
		})
	}
}

// TestTaskAgent_ResumeStep resumes a plan step that a crash interrupted
// after one model call: running the plan again carries the step on from
// its journal, by its id, and counts its usage in the task session once;
// running it a third time reuses the step's result.
func TestTaskAgent_ResumeStep(t *testing.T) {
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Tool: "work"}, Reply: scripted.Reply{Text: "analysed", Usage: usage15}},
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "work", Arguments: "{}"}}, Usage: usage15}},
	}}
	rec := &recorder{}
	f := newFixture(t, script, []toolsys.Tool{echoTool("work")}, func(c *actors.Config) {
		c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
	})
	const step = "tasks:sub:plan-p1-step-0"
	w := &journalWriter{t: t, j: f.rt.Journal()}
	w.write("tasks", messages.SubAgentSpawned{Turn: -1, CallID: "plan-p1-step-0", Child: step, Agent: f.rt.Agents()[0], Task: "analyse", At: time.Now()})
	w.write(step,
		messages.UserMessage{TurnID: "task", Turn: 0, Message: messages.UserText("analyse")},
		messages.AssistantMessage{Turn: 0, Message: assistantCalls(messages.ToolCall{ID: "w1", Name: "work", Arguments: "{}"}), FinishReason: messages.FinishToolCalls, Usage: *usage15},
		messages.ToolCallStarted{Turn: 0, CallID: "w1", Name: "work", Arguments: "{}"},
		messages.ToolResult{Turn: 0, CallID: "w1", Name: "work", Content: "worked"},
	)
	ta, err := actors.NewTaskAgent(f.rt, actors.TaskAgentConfig{Session: "tasks"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := f.rt.Open(t.Context(), "tasks")
	if err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		p, err := plan.JSONParser{IDs: func() string { return "p1" }}.Parse(`[{"description": "analyse", "independent": true}]`)
		if err != nil {
			t.Fatal(err)
		}
		if p, err = ta.ExecutePlan(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		if s := p.Steps[0]; s.Status != plan.Completed || s.Result != "analysed" {
			t.Errorf("run %d: step = %s %q, want completed \"analysed\"", run, s.Status, s.Result)
		}
		if n := len(rec.events()); n != 1 {
			t.Errorf("run %d: %d model calls since the crash, want the step's one", run, n)
		}
		rep, err := sess.Usage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if want := usage15.Add(*usage15); len(rep.SubAgents) != 1 || rep.Total != want || rep.SubAgents[0].Child != step {
			t.Errorf("run %d: task session usage = %+v, want the step's %+v once", run, rep, want)
		}
	}
}
