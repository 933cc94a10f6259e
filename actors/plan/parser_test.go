package plan_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors/plan"
)

// counter returns an IDs func giving "plan-1", "plan-2", ...
func counter() func() string {
	n := 0
	return func() string {
		n++
		return "plan-" + strconv.Itoa(n)
	}
}

func TestJSONParser_Parse(t *testing.T) {
	ab := []plan.Step{{Index: 0, Description: "a"}, {Index: 1, Description: "b"}}
	tests := []struct {
		name string
		text string
		want *plan.Plan
	}{
		{
			name: "object with every field",
			text: `{"goal": " Ship it ", "steps": [
				{"description": "Test"},
				{"description": "Build linux", "independent": true, "depends_on": [0]},
				{"description": "Build mac", "independent": true, "depends_on": [0], "agent": " builder "},
				{"description": "Tag", "depends_on": [1, 2]}]}`,
			want: &plan.Plan{ID: "plan-1", Goal: "Ship it", Steps: []plan.Step{
				{Index: 0, Description: "Test"},
				{Index: 1, Description: "Build linux", Independent: true, DependsOn: []int{0}},
				{Index: 2, Description: "Build mac", Independent: true, DependsOn: []int{0}, Agent: "builder"},
				{Index: 3, Description: "Tag", DependsOn: []int{1, 2}},
			}},
		},
		{"object without goal", `{"steps": [{"description": "a"}, {"description": "b"}]}`, &plan.Plan{ID: "plan-1", Steps: ab}},
		{"bare array of objects", `[{"description": "a"}, {"description": "b"}]`, &plan.Plan{ID: "plan-1", Steps: ab}},
		{"bare array of strings", `["a", "  b\n"]`, &plan.Plan{ID: "plan-1", Steps: ab}},
		{"strings and objects mixed", `["a", {"description": "b"}]`, &plan.Plan{ID: "plan-1", Steps: ab}},
		{"nulls for optional fields", `{"goal": null, "steps": [{"description": "a", "agent": null, "depends_on": null, "independent": null}, "b"]}`, &plan.Plan{ID: "plan-1", Steps: ab}},
		{"empty depends_on", `[{"description": "a", "depends_on": []}, "b"]`, &plan.Plan{ID: "plan-1", Steps: ab}},
		{"json fence among prose", "Here is the plan:\n\n```json\n{\"steps\": [\"a\", \"b\"]}\n```\n\nLet me know [if] it works.", &plan.Plan{ID: "plan-1", Steps: ab}},
		{"bare fence", "```\n[\"a\", \"b\"]\n```", &plan.Plan{ID: "plan-1", Steps: ab}},
		{"fence wins over brackets in the prose before it", "I will take [\"two\"] steps:\n```json\n[\"a\", \"b\"]\n```", &plan.Plan{ID: "plan-1", Steps: ab}},
		{"unclosed fence", "```json\n[\"a\", \"b\"]", &plan.Plan{ID: "plan-1", Steps: ab}},
		{"prose brackets before unfenced JSON", "My plan [draft] {v2}: [\"a\", \"b\"] and that is all.", &plan.Plan{ID: "plan-1", Steps: ab}},
		{"first of two values", `["a", "b"] ["c"]`, &plan.Plan{ID: "plan-1", Steps: ab}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.JSONParser{IDs: counter()}.Parse(tt.text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("parsed plan does not validate: %v", err)
			}
		})
	}
}

func TestJSONParser_RandomIDs(t *testing.T) {
	var jp plan.JSONParser
	a, errA := jp.Parse(`["a"]`)
	b, errB := jp.Parse(`["a"]`)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if len(a.ID) != 24 || a.ID == b.ID {
		t.Errorf("ids %q and %q: want two distinct 24-digit ids", a.ID, b.ID)
	}
}

func TestJSONParser_Errors(t *testing.T) {
	many := `[` + strings.Repeat(`"s", `, plan.DefaultMaxSteps) + `"last"]`
	tests := []struct {
		name     string
		parser   plan.JSONParser
		text     string
		step     int
		field    string
		problem  string
		syntaxAt int  // offset of the bad byte of a *json.SyntaxError; 0 when none
		bad      byte // the bad byte
	}{
		{name: "no JSON", text: "I could not make a plan.", step: -1, problem: "no JSON object or array found"},
		{name: "empty text", text: "", step: -1, problem: "no JSON object or array found"},
		{name: "trailing comma", text: `{"steps": ["a",]}`, step: -1, problem: "invalid JSON at offset 15: invalid character ']'", syntaxAt: 15, bad: ']'},
		{name: "offset counts the prose", text: "Plan: " + `{"steps": ["a",]}`, step: -1, problem: "invalid JSON at offset 21:", syntaxAt: 21, bad: ']'},
		{name: "unquoted keys and strings", text: `{steps: [a, b]}`, step: -1, problem: "invalid JSON at offset 1: invalid character 's'", syntaxAt: 1, bad: 's'},
		{name: "cut off", text: "```json\n" + `{"steps": ["a", "b"`, step: -1, problem: "starting at offset 8 is cut off at offset 27"},
		{name: "no steps field", text: `{"goal": "x"}`, step: -1, field: "steps", problem: "is missing"},
		{name: "empty steps", text: `{"goal": "x", "steps": []}`, step: -1, field: "steps", problem: "no steps"},
		{name: "empty array", text: `[]`, step: -1, field: "steps", problem: "no steps"},
		{name: "null steps", text: `{"steps": null}`, step: -1, field: "steps", problem: "no steps"},
		{name: "steps not an array", text: `{"steps": {"description": "a"}}`, step: -1, field: "steps", problem: "must be an array of steps"},
		{name: "goal not a string", text: `{"goal": 3, "steps": ["a"]}`, step: -1, field: "goal", problem: "must be a string"},
		{name: "unknown plan field", text: `{"title": "x", "steps": ["a"]}`, step: -1, field: "title", problem: "unknown field; the allowed fields are goal, steps"},
		{name: "unknown plan fields", text: `{"title": "x", "notes": 1, "steps": ["a"]}`, step: -1, field: "notes", problem: `unknown fields "notes", "title"`},
		{name: "too many steps", text: many, step: -1, field: "steps", problem: "the plan has 51 steps, more than the limit of 50"},
		{name: "too many for the option", parser: plan.JSONParser{MaxSteps: 2}, text: `["a", "b", "c"]`, step: -1, field: "steps", problem: "the plan has 3 steps, more than the limit of 2"},
		{name: "step without description", text: `["a", {"agent": "x"}]`, step: 1, field: "description", problem: "is missing or blank"},
		{name: "blank description", text: `["a", {"description": " \t"}]`, step: 1, field: "description", problem: "is missing or blank"},
		{name: "blank string step", text: `["a", "b", ""]`, step: 2, field: "description", problem: "is missing or blank"},
		{name: "description not a string", text: `[{"description": 5}]`, step: 0, field: "description", problem: "must be a string"},
		{name: "step of the wrong type", text: `["a", 7]`, step: 1, problem: "must be a description string or a step object"},
		{name: "unknown step field", text: `["a", {"description": "b", "dependsOn": [0]}]`, step: 1, field: "dependsOn", problem: "unknown field; the allowed fields are description, agent, depends_on, independent"},
		{name: "agent not a string", text: `[{"description": "a", "agent": ["x"]}]`, step: 0, field: "agent", problem: "must be a string"},
		{name: "depends_on not an array", text: `["a", {"description": "b", "depends_on": 0}]`, step: 1, field: "depends_on", problem: "must be an array of step indices"},
		{name: "depends_on not integers", text: `["a", {"description": "b", "depends_on": [0.5]}]`, step: 1, field: "depends_on", problem: "must be an array of step indices"},
		{name: "independent not a bool", text: `["a", {"description": "b", "independent": "yes"}]`, step: 1, field: "independent", problem: "must be true or false"},
		{name: "missing dependency", text: `["a", {"description": "b", "depends_on": [5]}]`, step: 1, field: "depends_on", problem: "step 5 does not exist (the plan has steps 0 to 1)"},
		{name: "negative dependency", text: `["a", {"description": "b", "depends_on": [-1]}]`, step: 1, field: "depends_on", problem: "step -1 does not exist"},
		{name: "forward dependency", text: `[{"description": "a", "depends_on": [1]}, "b"]`, step: 0, field: "depends_on", problem: "step 1 comes later"},
		{name: "self dependency", text: `["a", {"description": "b", "depends_on": [1]}]`, step: 1, field: "depends_on", problem: "depends on itself"},
		{name: "duplicate dependency", text: `["a", "b", {"description": "c", "depends_on": [0, 1, 0]}]`, step: 2, field: "depends_on", problem: "step 0 is listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.parser.Parse(tt.text)
			if p != nil {
				t.Errorf("Parse returned a plan with its error: %+v", p)
			}
			checkPlanError(t, err, tt.step, tt.field, tt.problem)
			var syn *json.SyntaxError
			if got := errors.As(err, &syn); got != (tt.syntaxAt != 0) {
				t.Errorf("wraps a *json.SyntaxError: %v, want %v", got, tt.syntaxAt != 0)
			}
			if tt.syntaxAt != 0 && tt.text[tt.syntaxAt] != tt.bad {
				t.Errorf("offset %d holds %q, want %q", tt.syntaxAt, tt.text[tt.syntaxAt], tt.bad)
			}
		})
	}
}

func TestInstructions(t *testing.T) {
	text := plan.Instructions()
	for _, want := range []string{`"steps"`, `"description"`, `"depends_on"`, `"independent"`, `"agent"`, "1 to 50 steps"} {
		if !strings.Contains(text, want) {
			t.Errorf("Instructions lack %q", want)
		}
	}
	if got := (plan.JSONParser{MaxSteps: 7}).Instructions(); !strings.Contains(got, "1 to 7 steps") {
		t.Errorf("Instructions ignore MaxSteps:\n%s", got)
	}
	// The example in the instructions must itself be a plan the parser accepts.
	p, err := plan.JSONParser{IDs: counter()}.Parse(text)
	if err != nil {
		t.Fatalf("the example in Instructions does not parse: %v", err)
	}
	if len(p.Steps) != 2 || p.Steps[1].Agent != "researcher" {
		t.Errorf("example plan = %+v", p)
	}
}
