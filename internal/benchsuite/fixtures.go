package benchsuite

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// lookupParams are the arguments of the lookup tool.
type lookupParams struct {
	Key string `json:"key" jsonschema:"description=The key to look up"`
}

// lookupTool answers from a fixed table: a tool whose own cost is
// negligible, so a turn measures the machinery around it.
type lookupTool struct{}

func (lookupTool) Name() string                   { return "lookup" }
func (lookupTool) Description() string            { return "Look up a key in the reference table." }
func (lookupTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (lookupTool) SecretParams() []string         { return nil }

func (lookupTool) Execute(_ context.Context, p lookupParams, _ *toolsys.Context) (toolsys.Result, error) {
	return toolsys.Result{Content: "value of " + p.Key + ": 42"}, nil
}

// waitParams are the arguments of the wait tool.
type waitParams struct {
	Millis int `json:"ms" jsonschema:"minimum=0,description=How long to wait in milliseconds"`
}

// waitTool waits the given time on a timer, standing for a tool that waits
// on I/O (an API call, a subprocess).
type waitTool struct{}

func (waitTool) Name() string                   { return "wait" }
func (waitTool) Description() string            { return "Wait for the given number of milliseconds." }
func (waitTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (waitTool) SecretParams() []string         { return nil }

func (waitTool) Execute(ctx context.Context, p waitParams, _ *toolsys.Context) (toolsys.Result, error) {
	t := time.NewTimer(time.Duration(p.Millis) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return toolsys.Result{Content: "waited"}, nil
	case <-ctx.Done():
		return toolsys.Result{}, ctx.Err()
	}
}

// lookupScript answers a user message with one lookup call and the tool's
// result with a short text: a turn of two model requests. It is stateless,
// so concurrent sessions share it.
func lookupScript() scripted.Script {
	return scripted.Script{Stateless: true, Rules: []scripted.Rule{
		{Name: "call", Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			Text:      "Let me look that up.",
			ToolCalls: []scripted.ToolCall{{Name: "lookup", Arguments: `{"key":"alpha"}`}},
		}},
		{Name: "answer", Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{
			Text: "The value of alpha is 42.",
		}},
	}}
}

// lookupTools returns a registry holding the lookup tool.
func lookupTools() *toolsys.Registry {
	reg := toolsys.NewRegistry(toolsys.Config{})
	toolsys.MustRegisterTyped[lookupParams](reg, lookupTool{})
	return reg
}

// httpClient returns a client whose transport keeps enough idle
// connections to the mock server for every side of a workload, and a
// function that closes them.
func httpClient() (*http.Client, func()) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost, tr.IdleConnTimeout = 256, 64, 90*time.Second
	return &http.Client{Transport: tr}, tr.CloseIdleConnections
}

// checkTurn returns an error unless res is a completed turn that made
// calls tool calls.
func checkTurn(res *actors.TurnResult, calls int) error {
	if res.Outcome != messages.OutcomeCompleted || len(res.ToolCalls) != calls {
		return fmt.Errorf("%w: session %s turn %d ended %s (%s) with %d tool calls, want completed with %d",
			ErrUnexpected, res.Session, res.Turn, res.Outcome, res.Reason, len(res.ToolCalls), calls)
	}
	for _, c := range res.ToolCalls {
		if c.IsError {
			return fmt.Errorf("%w: tool %s failed: %s", ErrUnexpected, c.Name, c.Content)
		}
	}
	return nil
}
