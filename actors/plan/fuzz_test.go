package plan_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors/plan"
)

// FuzzJSONParser checks that Parse never panics, that it fails only with a
// *PlanError, and that every plan it accepts validates, survives a JSON
// round trip and runs to the end under Next, Blocked and Transition. Seeds
// are in testdata/fuzz/FuzzJSONParser.
func FuzzJSONParser(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		const maxSteps = 8
		p, err := plan.JSONParser{MaxSteps: maxSteps, IDs: func() string { return "id" }}.Parse(text)
		if err != nil {
			var pe *plan.PlanError
			if p != nil || !errors.As(err, &pe) || !errors.Is(err, plan.ErrInvalidPlan) {
				t.Fatalf("Parse = %v, %v: want a nil plan and a *PlanError", p, err)
			}
			if pe.Step < -1 || pe.Step >= maxSteps || pe.Problem == "" {
				t.Fatalf("malformed PlanError %#v", pe)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted plan does not validate: %v", err)
		}
		if len(p.Steps) > maxSteps {
			t.Fatalf("accepted %d steps, limit %d", len(p.Steps), maxSteps)
		}
		for _, s := range p.Steps {
			if s.Status != plan.Pending {
				t.Fatalf("step %d starts %s", s.Index, s.Status)
			}
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back plan.Plan
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p, &back); diff != "" {
			t.Fatalf("JSON round trip (-want +got):\n%s", diff)
		}

		// Every step with an odd-length description fails.
		for rounds := 0; !p.Done(); rounds++ {
			if rounds > len(p.Steps) {
				t.Fatalf("no progress after %d rounds:\n%s", rounds, p.Summary())
			}
			blocked, next := p.Blocked(), p.Next()
			if len(blocked)+len(next) == 0 {
				t.Fatalf("stuck:\n%s", p.Summary())
			}
			for _, s := range blocked {
				if err := p.Transition(s.Index, plan.Skipped, "blocked", t1); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range next {
				to := plan.Completed
				if len(s.Description)%2 == 1 {
					to = plan.Failed
				}
				if err := p.Transition(s.Index, plan.Running, "", t0); err != nil {
					t.Fatal(err)
				}
				if err := p.Transition(s.Index, to, "x", t1); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("plan invalid while running: %v", err)
			}
		}
	})
}
