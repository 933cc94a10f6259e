package plan_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors/plan"
)

// spec is a compact step for building plans in tests.
type spec struct {
	status plan.StepStatus
	ind    bool
	deps   []int
}

func build(specs ...spec) *plan.Plan {
	p := &plan.Plan{ID: "p"}
	for i, s := range specs {
		p.Steps = append(p.Steps, plan.Step{Index: i, Description: "step", Status: s.status, Independent: s.ind, DependsOn: s.deps})
	}
	return p
}

func indices(steps []plan.Step) []int {
	var out []int
	for _, s := range steps {
		out = append(out, s.Index)
	}
	return out
}

const (
	P = plan.Pending
	R = plan.Running
	C = plan.Completed
	F = plan.Failed
	S = plan.Skipped
)

func TestPlan_Next(t *testing.T) {
	tests := []struct {
		name string
		plan *plan.Plan
		want []int
	}{
		{"sequential steps run one at a time", build(spec{status: P}, spec{status: P}), []int{0}},
		{"the next sequential step waits for a running one", build(spec{status: C}, spec{status: R}, spec{status: P}), nil},
		{"a group runs together", build(spec{status: C}, spec{status: P, ind: true}, spec{status: P, ind: true}, spec{status: P, ind: true}, spec{status: P}), []int{1, 2, 3}},
		{"a group at the start", build(spec{status: P, ind: true}, spec{status: P, ind: true}, spec{status: P}, spec{status: P, ind: true}), []int{0, 1}},
		{"the rest of a part-started group", build(spec{status: C, ind: true}, spec{status: R, ind: true}, spec{status: P, ind: true}, spec{status: P}), []int{2}},
		{"the step after a group waits for all of it", build(spec{status: C, ind: true}, spec{status: R, ind: true}, spec{status: C, ind: true}, spec{status: P}), nil},
		{"a group member waits for its dependency in the group", build(spec{status: P, ind: true}, spec{status: P, ind: true, deps: []int{0}}, spec{status: P, ind: true}), []int{0, 2}},
		{"the dependency done, the member is ready", build(spec{status: C, ind: true}, spec{status: P, ind: true, deps: []int{0}}, spec{status: R, ind: true}), []int{1}},
		{"a failed step without dependants does not stop the next", build(spec{status: F}, spec{status: P}), []int{1}},
		{"a step whose dependency failed never becomes ready", build(spec{status: F}, spec{status: P, deps: []int{0}}, spec{status: P}), nil},
		{"a done plan has nothing next", build(spec{status: C}, spec{status: S}, spec{status: F}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, indices(tt.plan.Next())); diff != "" {
				t.Errorf("Next (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlan_NextReturnsCopies(t *testing.T) {
	p := build(spec{status: C}, spec{status: P, deps: []int{0}})
	next := p.Next()
	next[0].DependsOn[0] = 9
	next[0].Status = plan.Failed
	if p.Steps[1].DependsOn[0] != 0 || p.Steps[1].Status != plan.Pending {
		t.Error("changing a step from Next changed the plan")
	}
}

func TestPlan_Blocked(t *testing.T) {
	p := build(
		spec{status: F},
		spec{status: P, deps: []int{0}},    // directly
		spec{status: P, deps: []int{1}},    // through 1
		spec{status: P},                    // free
		spec{status: P, deps: []int{3}},    // free
		spec{status: S},                    //
		spec{status: P, deps: []int{4, 5}}, // skipped dependency
		spec{status: C},
		spec{status: P, deps: []int{7}}, // free
	)
	if diff := cmp.Diff([]int{1, 2, 6}, indices(p.Blocked())); diff != "" {
		t.Errorf("Blocked (-want +got):\n%s", diff)
	}
}

func TestPlan_DoneAndFailed(t *testing.T) {
	tests := []struct {
		plan   *plan.Plan
		done   bool
		failed []int
	}{
		{build(spec{status: P}), false, nil},
		{build(spec{status: C}, spec{status: R}), false, nil},
		{build(spec{status: C}, spec{status: F}, spec{status: S}, spec{status: F}), true, []int{1, 3}},
	}
	for i, tt := range tests {
		if got := tt.plan.Done(); got != tt.done {
			t.Errorf("plan %d: Done = %v, want %v", i, got, tt.done)
		}
		if got := indices(tt.plan.Failed()); !slices.Equal(got, tt.failed) {
			t.Errorf("plan %d: Failed = %v, want %v", i, got, tt.failed)
		}
	}
}

// TestPlan_RunLoop drives a plan the way a task agent does and checks the
// order in which steps start.
func TestPlan_RunLoop(t *testing.T) {
	p := build(
		spec{status: P},
		spec{status: P, ind: true},
		spec{status: P, ind: true},
		spec{status: P, ind: true, deps: []int{1}},
		spec{status: P, deps: []int{2}},
		spec{status: P, deps: []int{4}},
		spec{status: P},
	)
	fail := map[int]bool{2: true}
	var rounds [][]int
	for !p.Done() {
		blocked := p.Blocked()
		for _, s := range blocked {
			if err := p.Transition(s.Index, plan.Skipped, "dependency failed", t1); err != nil {
				t.Fatal(err)
			}
		}
		next := p.Next()
		if len(next) == 0 {
			if len(blocked) == 0 {
				t.Fatalf("stuck:\n%s", p.Summary())
			}
			continue
		}
		rounds = append(rounds, indices(next))
		for _, s := range next {
			if err := p.Transition(s.Index, plan.Running, "", t0); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range next {
			to := plan.Completed
			if fail[s.Index] {
				to = plan.Failed
			}
			if err := p.Transition(s.Index, to, "x", t1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if diff := cmp.Diff([][]int{{0}, {1, 2}, {3}, {6}}, rounds); diff != "" {
		t.Errorf("rounds (-want +got):\n%s", diff)
	}
	want := []plan.StepStatus{C, C, F, C, S, S, C}
	for i, s := range p.Steps {
		if s.Status != want[i] {
			t.Errorf("step %d is %s, want %s", i, s.Status, want[i])
		}
	}
}
