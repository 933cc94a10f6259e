package plan_test

import (
	"fmt"
	"time"

	"github.com/agcore/agcore/actors/plan"
)

func ExampleJSONParser() {
	parser := plan.JSONParser{IDs: func() string { return "plan-1" }}
	reply := "Here is my plan:\n```json\n" + `{
  "goal": "Compare two libraries",
  "steps": [
    {"description": "Summarise library A", "independent": true, "agent": "researcher"},
    {"description": "Summarise library B", "independent": true, "agent": "researcher"},
    {"description": "Compare the summaries", "depends_on": [0, 1]}
  ]
}` + "\n```"
	p, err := parser.Parse(reply)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(p.Summary())
	for _, s := range p.Next() {
		fmt.Println("ready:", s.Index)
	}

	_, err = parser.Parse(`["Write the report", {"description": "Check it", "depends_on": [2]}]`)
	fmt.Println(err)
	// Output:
	// Goal: Compare two libraries
	// Steps (0 of 3 finished):
	// 0. [pending] Summarise library A (parallel; agent: researcher)
	// 1. [pending] Summarise library B (parallel; agent: researcher)
	// 2. [pending] Compare the summaries (after 0, 1)
	// ready: 0
	// ready: 1
	// plan: step 1: depends_on: step 2 does not exist (the plan has steps 0 to 1)
}

func ExamplePlan_Transition() {
	p := &plan.Plan{ID: "p", Steps: []plan.Step{{Index: 0, Description: "Draft the letter"}}}
	now := time.Date(2026, 6, 11, 9, 0, 0, 0, time.UTC)

	fmt.Println(p.Transition(0, plan.Running, "", now))
	fmt.Println(p.Transition(0, plan.Completed, "Dear reader, ...", now.Add(time.Minute)))
	fmt.Println(p.Transition(0, plan.Running, "", now))
	fmt.Println(p.Steps[0].Status, p.Steps[0].Finished.Sub(p.Steps[0].Started))
	// Output:
	// <nil>
	// <nil>
	// plan: step 0: completed -> running: illegal step transition
	// completed 1m0s
}
