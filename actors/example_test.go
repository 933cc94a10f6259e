package actors_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// ClockParams are the arguments of the clock tool.
type ClockParams struct {
	Zone string `json:"zone" jsonschema:"description=An IANA time zone"`
}

// Clock is a typed tool that tells a fixed time, so that the examples'
// output does not change.
type Clock struct{}

func (Clock) Name() string                   { return "clock" }
func (Clock) Description() string            { return "Tells the time in a time zone." }
func (Clock) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (Clock) SecretParams() []string         { return nil }
func (Clock) Execute(_ context.Context, p ClockParams, _ *toolsys.Context) (toolsys.Result, error) {
	loc, err := time.LoadLocation(p.Zone)
	if err != nil {
		return toolsys.ErrorResult("unknown zone %q", p.Zone), nil
	}
	return toolsys.Result{Content: time.Date(2026, 1, 2, 15, 4, 0, 0, time.UTC).In(loc).Format(time.Kitchen)}, nil
}

func ExampleNew() {
	// A scripted model stands in for an LLM: it answers every message
	// with the same text.
	model := scripted.MustNew(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "Hello! How can I help?"}},
	}}, scripted.Options{})

	rt, err := actors.NewInMemory(actors.Config{Provider: model})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Shutdown(context.Background())

	ctx := context.Background()
	sess, err := rt.Open(ctx, "greeting")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sess.Submit(ctx, messages.UserText("hi"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("turn %d %s after %d round trip: %s\n", res.Turn, res.Outcome, res.RoundTrips, res.Text)
	// Output:
	// turn 0 completed after 1 round trip: Hello! How can I help?
}

func ExampleSession_Stream() {
	// The scripted model calls the clock tool, then answers with its
	// result.
	model := scripted.MustNew(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			ToolCalls: []scripted.ToolCall{{ID: "call_1", Name: "clock", Arguments: `{"zone":"UTC"}`}}}},
		{Match: scripted.Match{Tool: "clock"}, Reply: scripted.Reply{Text: "It is 3:04PM in UTC."}},
	}}, scripted.Options{})
	tools := toolsys.NewRegistry(toolsys.Config{})
	toolsys.MustRegisterTyped[ClockParams](tools, Clock{})

	rt, err := actors.NewInMemory(actors.Config{Provider: model, Tools: tools})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Shutdown(context.Background())

	ctx := context.Background()
	sess, err := rt.Open(ctx, "clock")
	if err != nil {
		fmt.Println(err)
		return
	}
	var text strings.Builder
	for ev, err := range sess.Stream(ctx, messages.UserText("what time is it?")) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch e := ev.(type) {
		case messages.TextDelta:
			text.WriteString(e.Text) // print deltas as they come in a real program
		case messages.ToolStarted:
			fmt.Println("tool started:", e.Name, e.Arguments)
		case messages.ToolFinished:
			fmt.Println("tool finished:", e.Name, e.Content, "error:", e.IsError)
		case messages.TurnEnded:
			fmt.Println("turn ended:", e.Outcome, "after", e.RoundTrips, "round trips")
		}
	}
	fmt.Println("streamed text:", text.String())
	// Output:
	// tool started: clock {"zone":"UTC"}
	// tool finished: clock 3:04PM error: false
	// turn ended: completed after 2 round trips
	// streamed text: It is 3:04PM in UTC.
}
