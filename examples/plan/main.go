// Command plan has a task agent break a goal into a plan and carry it out.
//
// The task agent asks its model for a plan (a JSON list of steps, each
// possibly depending on earlier ones or marked independent), parses it,
// and runs the steps in order: a plain step runs as a turn of the task
// agent's own session, and adjacent independent steps run at the same time
// as sub-agents, each in a session of its own. Every step is told the
// results of the steps it depends on. The program prints each step as it
// completes, then the plan with its statuses and the final answer.
//
// Run it with:
//
//	go run ./examples/plan
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/actors/plan"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "plan:", err)
		os.Exit(1)
	}
}

const goal = "Plan a one-day visit to Lisbon."

// thePlan is what the scripted model writes when asked for a plan: step 0
// first, then steps 1 and 2 together, then step 3 with all three results.
const thePlan = `Here is my plan:
{"goal": "Plan a one-day visit to Lisbon",
 "steps": [
  {"description": "List three sights worth seeing in Lisbon."},
  {"description": "Find a place to eat lunch near the sights.", "depends_on": [0], "independent": true},
  {"description": "Check the weather forecast for the day.", "independent": true},
  {"description": "Write the day's itinerary.", "depends_on": [0, 1, 2]}
 ]}`

// script answers the planning request with thePlan and each step with its
// result. A step's request quotes the descriptions of the steps it depends
// on, so the rules of later steps come first.
func script() scripted.Script {
	step := func(description, answer string) scripted.Rule {
		return scripted.Rule{
			Match: scripted.Match{Role: messages.RoleUser, Regexp: `Your step \(\d+ of \d+\): ` + regexp.QuoteMeta(description)},
			Reply: scripted.Reply{Text: answer},
		}
	}
	return scripted.Script{Stateless: true, Rules: []scripted.Rule{
		step("Write the day's itinerary", "Morning: Belém Tower and the Jerónimos Monastery. "+
			"Lunch: pastéis de nata at Pastéis de Belém. Afternoon: tram 28 up to São Jorge Castle. Bring sunglasses: sunny, 24°C."),
		step("Find a place to eat lunch", "Pastéis de Belém, a short walk from the monastery."),
		step("Check the weather forecast", "Sunny, 24°C, a light breeze from the river."),
		step("List three sights", "Belém Tower, the Jerónimos Monastery and São Jorge Castle."),
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "Reply with the plan"}, Reply: scripted.Reply{Text: thePlan}},
	}}
}

func run(ctx context.Context, out io.Writer) (err error) {
	model, err := scripted.New(script(), scripted.Options{})
	if err != nil {
		return err
	}
	rt, err := actors.NewInMemory(actors.Config{Provider: model})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Shutdown(context.WithoutCancel(ctx))) }()

	ta, err := actors.NewTaskAgent(rt, actors.TaskAgentConfig{
		Session: "trip",
		// The hook runs each time a step reaches a terminal status.
		OnPlanStepComplete: func(_ context.Context, _ *plan.Plan, s plan.Step) {
			fmt.Fprintf(out, "step %d %s (%s): %s\n", s.Index, s.Status, runsAs(s), firstNonEmpty(s.Result, s.Error))
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "== goal: %s\n", goal)
	p, err := ta.Run(ctx, goal)
	if err != nil {
		return err
	}

	fmt.Fprintf(out, "\n== the plan (%s)\n", p.Goal)
	for _, s := range p.Steps {
		var notes []string
		if len(s.DependsOn) > 0 {
			deps := make([]string, len(s.DependsOn))
			for i, d := range s.DependsOn {
				deps[i] = strconv.Itoa(d)
			}
			notes = append(notes, "after "+strings.Join(deps, ", "))
		}
		if s.Independent {
			notes = append(notes, "independent")
		}
		fmt.Fprintf(out, "%d. [%s] %s", s.Index, s.Status, s.Description)
		if len(notes) > 0 {
			fmt.Fprintf(out, " (%s)", strings.Join(notes, ", "))
		}
		fmt.Fprintln(out)
	}
	last := p.Steps[len(p.Steps)-1]
	fmt.Fprintf(out, "\n== itinerary\n%s\n", last.Result)
	return nil
}

// runsAs says where the task agent runs a step.
func runsAs(s plan.Step) string {
	if s.Independent || s.Agent != "" {
		return "sub-agent"
	}
	return "task agent's session"
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
