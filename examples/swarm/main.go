// Command swarm shows sub-agents: a coordinator agent delegates research to
// three researcher sub-agents that run in parallel, each in a fresh context
// of its own, then hands their notes to a writer sub-agent, and answers
// with the writer's brief. Every sub-agent is a child session of the
// coordinator's session, journaled as spawned and finished; its tokens roll
// up into the coordinator's usage.
//
// The program runs offline on a scripted model and prints the coordinator's
// events as they arrive, then the usage roll-up.
//
// Run it with:
//
//	go run ./examples/swarm
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "swarm:", err)
		os.Exit(1)
	}
}

// topics are what the researchers look into.
var topics = []string{"supervision", "mailboxes", "durability"}

// script is the scripted model behind every agent. It is stateless, so the
// replies do not depend on how the parallel sub-agents interleave; each
// reply reports the same usage, so the roll-up is easy to check by hand.
func script() scripted.Script {
	usage := &messages.Usage{PromptTokens: 40, CompletionTokens: 10, TotalTokens: 50}
	var research []scripted.ToolCall
	for _, t := range topics {
		research = append(research, scripted.ToolCall{Name: actors.SpawnAgentToolName,
			Arguments: fmt.Sprintf(`{"agent": "researcher", "task": "Research: %s in actor runtimes"}`, t)})
	}
	writer := scripted.ToolCall{Name: actors.SpawnAgentToolName,
		Arguments: `{"agent": "writer", "task": "Write the brief from the three research notes: supervision, mailboxes, durability."}`}
	return scripted.Script{Stateless: true, Rules: []scripted.Rule{
		{Name: "delegate", Match: scripted.Match{Role: messages.RoleUser, Contains: "Brief me"}, Reply: scripted.Reply{ToolCalls: research, Usage: usage}},
		{Name: "coordinate", Match: scripted.Match{Tool: actors.SpawnAgentToolName}, Turns: []scripted.Reply{
			{Text: "unused", Usage: usage},
			{ToolCalls: []scripted.ToolCall{writer}, Usage: usage},
			{Text: "Here is your brief, from three researchers and a writer.", Usage: usage},
		}},
		{Name: "supervision", Match: scripted.Match{Contains: "Research: supervision"}, Reply: scripted.Reply{Text: "A failing child is restarted or stopped by its parent's strategy.", Usage: usage}},
		{Name: "mailboxes", Match: scripted.Match{Contains: "Research: mailboxes"}, Reply: scripted.Reply{Text: "Each actor handles one message at a time from its mailbox.", Usage: usage}},
		{Name: "durability", Match: scripted.Match{Contains: "Research: durability"}, Reply: scripted.Reply{Text: "State is rebuilt by replaying a journal of events.", Usage: usage}},
		{Name: "write", Match: scripted.Match{Contains: "Write the brief"}, Reply: scripted.Reply{Text: "Actors isolate failures, serialise work and replay journals to recover.", Usage: usage}},
	}}
}

func run(ctx context.Context, w io.Writer) error {
	prov, err := scripted.New(script(), scripted.Options{})
	if err != nil {
		return err
	}
	rt, err := actors.NewInMemory(actors.Config{
		Provider: prov,
		Agents: []actors.AgentProfile{
			{Name: "coordinator", Prompt: "You split work between sub-agents and assemble their answers.", Tools: []string{actors.SpawnAgentToolName}},
			{Name: "researcher", Description: "finds facts on one topic", Prompt: "You research one topic and answer in a sentence.", Tools: []string{}},
			{Name: "writer", Description: "writes the final text", Prompt: "You write briefs.", Tools: []string{}},
		},
		SubAgents: actors.SubAgents{Enabled: true, MaxConcurrent: 3, Budget: actors.Budget{MaxTokens: 1000}},
	})
	if err != nil {
		return err
	}
	defer rt.Shutdown(context.WithoutCancel(ctx))
	sess, err := rt.Open(ctx, "swarm-demo")
	if err != nil {
		return err
	}

	fmt.Fprintln(w, "== coordinator events")
	for ev, err := range sess.Stream(ctx, messages.UserText("Brief me on actor runtimes.")) {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case messages.SubAgentStarted:
			fmt.Fprintf(w, "spawned   %s (agent %s, depth %d)\n", e.Child, e.Agent, e.Depth)
		case messages.SubAgentEnded:
			fmt.Fprintf(w, "finished  %s: %s, %d tokens\n", e.Child, e.Outcome, e.Usage.TotalTokens)
		case messages.ToolFinished:
			fmt.Fprintf(w, "result    %s: %s\n", e.CallID, e.Content)
		case messages.TurnEnded:
			fmt.Fprintf(w, "answer    %s (%s)\n", e.Text, e.Outcome)
			if e.Outcome != messages.OutcomeCompleted {
				return fmt.Errorf("the turn ended %s: %s", e.Outcome, e.Reason)
			}
		}
	}

	rep, err := sess.Usage(ctx)
	if err != nil {
		return err
	}
	st, err := sess.Status(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\n== usage roll-up (tokens)")
	fmt.Fprintf(w, "coordinator's own calls  %4d\n", rep.Own.TotalTokens)
	for _, sa := range rep.SubAgents {
		fmt.Fprintf(w, "%-24s %4d  (%s)\n", sa.Agent+" sub-agent", sa.Usage.TotalTokens, sa.Child)
	}
	fmt.Fprintf(w, "session total            %4d\n", rep.Total.TotalTokens)
	if rep.Total != st.Usage {
		return fmt.Errorf("the roll-up %+v differs from the session's usage %+v", rep.Total, st.Usage)
	}
	fmt.Fprintf(w, "status agrees: %v; runtime total %d\n", rep.Total == st.Usage, rt.Usage().Usage.TotalTokens)
	return nil
}
