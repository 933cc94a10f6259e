package plan_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors/plan"
)

var (
	t0 = time.Date(2026, 6, 11, 9, 30, 0, 0, time.UTC)
	t1 = t0.Add(1500 * time.Millisecond)
)

func TestPlan_TransitionAllPairs(t *testing.T) {
	statuses := []plan.StepStatus{plan.Pending, plan.Running, plan.Completed, plan.Failed, plan.Skipped}
	legal := map[[2]plan.StepStatus]bool{
		{plan.Pending, plan.Running}:   true,
		{plan.Pending, plan.Skipped}:   true,
		{plan.Running, plan.Completed}: true,
		{plan.Running, plan.Failed}:    true,
		{plan.Running, plan.Skipped}:   true,
	}
	for _, from := range statuses {
		for _, to := range append(statuses, plan.StepStatus(9)) {
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				p := &plan.Plan{Steps: []plan.Step{{Description: "only", Status: from}}}
				err := p.Transition(0, to, "detail", t0)
				if got, want := err == nil, legal[[2]plan.StepStatus{from, to}]; got != want {
					t.Fatalf("Transition(%s -> %s) = %v, want allowed=%v", from, to, err, want)
				}
				if from.CanTransition(to) != (err == nil) {
					t.Errorf("CanTransition(%s, %s) = %v disagrees with Transition error %v", from, to, from.CanTransition(to), err)
				}
				if err == nil {
					if got := p.Steps[0].Status; got != to {
						t.Errorf("status = %s, want %s", got, to)
					}
					return
				}
				var te *plan.TransitionError
				if !errors.As(err, &te) || !errors.Is(err, plan.ErrIllegalTransition) {
					t.Fatalf("error %v: want a *TransitionError wrapping ErrIllegalTransition", err)
				}
				if te.Step != 0 || te.From != from || te.To != to {
					t.Errorf("TransitionError = {Step %d, From %s, To %s}, want {0, %s, %s}", te.Step, te.From, te.To, from, to)
				}
				if want := "plan: step 0: " + from.String() + " -> " + to.String() + ": illegal step transition"; err.Error() != want {
					t.Errorf("message %q, want %q", err, want)
				}
				if diff := cmp.Diff(plan.Step{Description: "only", Status: from}, p.Steps[0]); diff != "" {
					t.Errorf("refused transition changed the step (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestStepStatus_IsTerminal(t *testing.T) {
	want := map[plan.StepStatus]bool{plan.Pending: false, plan.Running: false, plan.Completed: true, plan.Failed: true, plan.Skipped: true, plan.StepStatus(9): false}
	for s, terminal := range want {
		if s.IsTerminal() != terminal {
			t.Errorf("%s.IsTerminal() = %v, want %v", s, !terminal, terminal)
		}
	}
}

func TestPlan_TransitionRecords(t *testing.T) {
	p := &plan.Plan{Steps: []plan.Step{
		{Index: 0, Description: "a"},
		{Index: 1, Description: "b"},
		{Index: 2, Description: "c"},
	}}
	steps := []struct {
		index  int
		to     plan.StepStatus
		detail string
		at     time.Time
	}{
		{0, plan.Running, "ignored", t0},
		{0, plan.Completed, "answer", t1},
		{1, plan.Running, "", t0},
		{1, plan.Failed, "boom", t1},
		{2, plan.Skipped, "not needed", t1},
	}
	for _, s := range steps {
		if err := p.Transition(s.index, s.to, s.detail, s.at); err != nil {
			t.Fatal(err)
		}
	}
	want := []plan.Step{
		{Index: 0, Description: "a", Status: plan.Completed, Result: "answer", Started: t0, Finished: t1},
		{Index: 1, Description: "b", Status: plan.Failed, Error: "boom", Started: t0, Finished: t1},
		{Index: 2, Description: "c", Status: plan.Skipped, Error: "not needed", Finished: t1},
	}
	if diff := cmp.Diff(want, p.Steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

func TestPlan_TransitionDependencies(t *testing.T) {
	p := &plan.Plan{Steps: []plan.Step{
		{Index: 0, Description: "a"},
		{Index: 1, Description: "b", DependsOn: []int{0}},
	}}
	err := p.Transition(1, plan.Running, "", t0)
	var te *plan.TransitionError
	if !errors.As(err, &te) || !errors.Is(err, plan.ErrDependencyNotCompleted) || te.Step != 1 {
		t.Fatalf("start before dependency = %v, want a *TransitionError for step 1 wrapping ErrDependencyNotCompleted", err)
	}
	if want := "plan: step 1: pending -> running: dependency not completed: step 0 is pending"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	for _, to := range []plan.StepStatus{plan.Running, plan.Completed} {
		if err := p.Transition(0, to, "", t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Transition(1, plan.Running, "", t0); err != nil {
		t.Errorf("start after dependency completed: %v", err)
	}
}

func TestPlan_TransitionNoStep(t *testing.T) {
	p := &plan.Plan{Steps: []plan.Step{{Description: "a"}}}
	for _, i := range []int{-1, 1} {
		if err := p.Transition(i, plan.Running, "", t0); !errors.Is(err, plan.ErrNoStep) {
			t.Errorf("Transition(%d) = %v, want ErrNoStep", i, err)
		}
	}
}

func TestPlan_Validate(t *testing.T) {
	valid := func() *plan.Plan {
		return &plan.Plan{ID: "p", Steps: []plan.Step{
			{Index: 0, Description: "a", Status: plan.Completed},
			{Index: 1, Description: "b", DependsOn: []int{0}, Status: plan.Running},
			{Index: 2, Description: "c", DependsOn: []int{1}},
		}}
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid plan: %v", err)
	}
	tests := []struct {
		name    string
		edit    func(p *plan.Plan)
		step    int
		field   string
		problem string
	}{
		{"no steps", func(p *plan.Plan) { p.Steps = nil }, -1, "steps", "no steps"},
		{"wrong index", func(p *plan.Plan) { p.Steps[1].Index = 4 }, 1, "index", "is 4, want its position 1"},
		{"blank description", func(p *plan.Plan) { p.Steps[2].Description = " \n" }, 2, "description", "missing or blank"},
		{"unknown status", func(p *plan.Plan) { p.Steps[2].Status = 7 }, 2, "status", "StepStatus(7) is not a known status"},
		{"missing dependency", func(p *plan.Plan) { p.Steps[2].DependsOn = []int{3} }, 2, "depends_on", "step 3 does not exist"},
		{"negative dependency", func(p *plan.Plan) { p.Steps[2].DependsOn = []int{-1} }, 2, "depends_on", "step -1 does not exist"},
		{"forward dependency", func(p *plan.Plan) { p.Steps[0].DependsOn = []int{2} }, 0, "depends_on", "step 2 comes later"},
		{"self dependency", func(p *plan.Plan) { p.Steps[1].DependsOn = []int{1} }, 1, "depends_on", "depends on itself"},
		{"duplicate dependency", func(p *plan.Plan) { p.Steps[2].DependsOn = []int{0, 1, 0} }, 2, "depends_on", "step 0 is listed twice"},
		{"started too early", func(p *plan.Plan) { p.Steps[0].Status = plan.Pending }, 1, "status", "is running while its dependency, step 0, is pending"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := valid()
			tt.edit(p)
			checkPlanError(t, p.Validate(), tt.step, tt.field, tt.problem)
		})
	}
}

// checkPlanError fails t unless err is a *PlanError for step and field whose
// Problem contains problem.
func checkPlanError(t *testing.T, err error, step int, field, problem string) {
	t.Helper()
	var pe *plan.PlanError
	if !errors.As(err, &pe) || !errors.Is(err, plan.ErrInvalidPlan) {
		t.Fatalf("error %v: want a *PlanError matching ErrInvalidPlan", err)
	}
	if pe.Step != step || pe.Field != field || !strings.Contains(pe.Problem, problem) {
		t.Errorf("PlanError{Step %d, Field %q, Problem %q}, want {%d, %q, containing %q}", pe.Step, pe.Field, pe.Problem, step, field, problem)
	}
	if step >= 0 && !strings.Contains(err.Error(), "step "+strconv.Itoa(step)+":") {
		t.Errorf("message %q does not name step %d", err, step)
	}
}

func TestPlan_JSON(t *testing.T) {
	p := &plan.Plan{ID: "p1", Goal: "ship", Steps: []plan.Step{
		{Index: 0, Description: "test", Agent: "tester", Status: plan.Completed, Result: "ok", Started: t0, Finished: t1},
		{Index: 1, Description: "build", DependsOn: []int{0}, Independent: true, Status: plan.Failed, Error: "boom", Started: t0, Finished: t1.Add(time.Nanosecond)},
		{Index: 2, Description: "tag", DependsOn: []int{0, 1}, Status: plan.Skipped, Finished: t1},
		{Index: 3, Description: "announce", Status: plan.Running, Started: t1},
		{Index: 4, Description: "rest"},
	}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var got plan.Plan
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, &got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	small, err := json.Marshal(&plan.Plan{ID: "p2", Goal: "g", Steps: []plan.Step{
		{Index: 0, Description: "a", Status: plan.Completed, Result: "r", Started: t0, Finished: t1},
		{Index: 1, Description: "b", DependsOn: []int{0}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"p2","goal":"g","steps":[` +
		`{"index":0,"description":"a","status":"completed","result":"r","started":"2026-06-11T09:30:00Z","finished":"2026-06-11T09:30:01.5Z"},` +
		`{"index":1,"description":"b","depends_on":[0],"status":"pending"}]}`
	if string(small) != want {
		t.Errorf("JSON form\n got %s\nwant %s", small, want)
	}

	if err := json.Unmarshal([]byte(`{"steps":[{"description":"a","status":"done"}]}`), &got); err == nil || !strings.Contains(err.Error(), `unknown step status "done"`) {
		t.Errorf("unknown status decoded with error %v", err)
	}
	if _, err := json.Marshal(plan.StepStatus(9)); err == nil {
		t.Error("an out-of-range status encoded without error")
	}
}

func TestPlan_Clone(t *testing.T) {
	p := &plan.Plan{ID: "p", Steps: []plan.Step{{Index: 0, Description: "a"}, {Index: 1, Description: "b", DependsOn: []int{0}}}}
	c := p.Clone()
	if diff := cmp.Diff(p, c); diff != "" {
		t.Fatalf("clone differs (-orig +clone):\n%s", diff)
	}
	c.Steps[1].DependsOn[0] = 5
	c.Steps[0].Status = plan.Running
	if p.Steps[1].DependsOn[0] != 0 || p.Steps[0].Status != plan.Pending {
		t.Error("changing the clone changed the original")
	}
}
