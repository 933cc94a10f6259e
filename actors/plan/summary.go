package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// excerptRunes bounds each result or error quoted in a Summary.
const excerptRunes = 160

// Summary renders the plan as compact text for a model: the goal, then one
// line per step with its status, description, scheduling notes and an
// excerpt of its result or error. For example:
//
//	Goal: Ship the release
//	Steps (2 of 3 finished):
//	0. [completed] Run the tests -> all tests pass
//	1. [failed] Build the binaries -> error: linker crashed
//	2. [pending] Tag the release (after 1; agent: releaser)
func (p *Plan) Summary() string {
	var b strings.Builder
	finished := 0
	for _, s := range p.Steps {
		if s.Status.IsTerminal() {
			finished++
		}
	}
	if p.Goal != "" {
		fmt.Fprintf(&b, "Goal: %s\n", oneLine(p.Goal, 0))
	}
	fmt.Fprintf(&b, "Steps (%d of %d finished):\n", finished, len(p.Steps))
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "%d. [%s] %s", s.Index, s.Status, oneLine(s.Description, 0))
		var notes []string
		if len(s.DependsOn) > 0 {
			deps := make([]string, len(s.DependsOn))
			for k, d := range s.DependsOn {
				deps[k] = strconv.Itoa(d)
			}
			notes = append(notes, "after "+strings.Join(deps, ", "))
		}
		if s.Independent {
			notes = append(notes, "parallel")
		}
		if s.Agent != "" {
			notes = append(notes, "agent: "+s.Agent)
		}
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, "; "))
		}
		switch {
		case s.Status == Completed && s.Result != "":
			b.WriteString(" -> " + oneLine(s.Result, excerptRunes))
		case s.Status == Failed:
			b.WriteString(" -> error: " + oneLine(s.Error, excerptRunes))
		case s.Status == Skipped && s.Error != "":
			b.WriteString(" -> " + oneLine(s.Error, excerptRunes))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// oneLine collapses runs of white space in s to single spaces and, when limit
// is positive, cuts the result to limit runes, marking the cut with "…".
func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if limit <= 0 {
		return s
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
