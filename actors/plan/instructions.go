package plan

import "fmt"

// Instructions tells a model how to write a plan that the zero JSONParser
// accepts (at most DefaultMaxSteps steps). Append it to a planning request.
func Instructions() string { return JSONParser{}.Instructions() }

// Instructions tells a model how to write a plan that jp accepts, including
// its step limit.
func (jp JSONParser) Instructions() string {
	return fmt.Sprintf(`Reply with the plan as one JSON object in this form:

{"goal": "the goal in one sentence",
 "steps": [
  {"description": "first thing to do"},
  {"description": "second thing to do", "depends_on": [0], "independent": true, "agent": "researcher"}
 ]}

Rules:
- "steps" holds 1 to %d steps. They run in the order written and are numbered from 0.
- Every step needs a "description": a complete, self-contained instruction for that step.
- "depends_on" (optional) lists the numbers of earlier steps whose results the step needs. A step may depend only on steps before it.
- "independent": true (optional) lets the step run at the same time as the neighbouring independent steps. Mark only steps that do not need each other's results.
- "agent" (optional) names the agent profile that should carry out the step. Leave it out to carry out the step yourself.
- Use no other fields.
`, jp.maxSteps())
}
