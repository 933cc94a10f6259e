package plan_test

import (
	"strings"
	"testing"

	"github.com/agcore/agcore/actors/plan"
)

func TestPlan_Summary(t *testing.T) {
	p := &plan.Plan{ID: "p", Goal: "Ship\nthe release", Steps: []plan.Step{
		{Index: 0, Description: "Run the tests", Status: plan.Completed, Result: "all\n  pass"},
		{Index: 1, Description: "Build", Independent: true, Status: plan.Failed, Error: "linker crashed"},
		{Index: 2, Description: "Docs", Independent: true, Status: plan.Running},
		{Index: 3, Description: "Tag", DependsOn: []int{0, 1}, Agent: "releaser", Status: plan.Skipped, Error: "dependency 1 failed"},
		{Index: 4, Description: "Announce", Status: plan.Completed, Result: strings.Repeat("é", 200)},
		{Index: 5, Description: "Rest"},
	}}
	want := `Goal: Ship the release
Steps (4 of 6 finished):
0. [completed] Run the tests -> all pass
1. [failed] Build (parallel) -> error: linker crashed
2. [running] Docs (parallel)
3. [skipped] Tag (after 0, 1; agent: releaser) -> dependency 1 failed
4. [completed] Announce -> ` + strings.Repeat("é", 160) + `…
5. [pending] Rest
`
	if got := p.Summary(); got != want {
		t.Errorf("Summary:\n%s\nwant:\n%s", got, want)
	}
}
