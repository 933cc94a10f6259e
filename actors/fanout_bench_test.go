package actors_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// countParams are the parameters of countTool.
type countParams struct {
	N int `json:"n" jsonschema:"minimum=0"`
}

// countTool is a typed read-only tool that answers at once.
type countTool struct{}

func (countTool) Name() string                   { return "count" }
func (countTool) Description() string            { return "Count to n." }
func (countTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (countTool) SecretParams() []string         { return nil }
func (countTool) Execute(_ context.Context, p countParams, _ *toolsys.Context) (toolsys.Result, error) {
	return toolsys.Result{Content: fmt.Sprint(p.N)}, nil
}

// BenchmarkFanOutTurn runs turns whose model reply holds 64 calls of a
// typed tool that answers at once, so that the time per turn is what the
// runtime spends on a 64-call round: starting, journaling and collecting
// every call, around two model calls. A session serves 8 turns.
func BenchmarkFanOutTurn(b *testing.B) {
	const calls, turnsPerSession = 64, 8
	cs := make([]scripted.ToolCall, calls)
	for i := range cs {
		cs[i] = scripted.ToolCall{Name: "count", Arguments: fmt.Sprintf(`{"n":%d}`, i)}
	}
	script := toolScript("done", cs...)
	script.Stateless = true
	reg := toolsys.NewRegistry(toolsys.Config{})
	toolsys.MustRegisterTyped[countParams](reg, countTool{})
	rt, err := actors.NewInMemory(actors.Config{Provider: scripted.MustNew(script, scripted.Options{}), Tools: reg, IdleTimeout: -1,
		Compaction: actors.Compaction{Disabled: true}, Limits: actors.Limits{MaxParallelTools: calls}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	ctx := context.Background()
	var sess *actors.Session
	turn := 0
	b.ReportAllocs()
	for b.Loop() {
		if turn%turnsPerSession == 0 {
			if sess, err = rt.Open(ctx, fmt.Sprintf("fan-%d", turn)); err != nil {
				b.Fatal(err)
			}
		}
		turn++
		res, err := sess.Submit(ctx, messages.UserText("go"))
		if err != nil || res.Outcome != messages.OutcomeCompleted {
			b.Fatalf("turn = %+v, %v", res, err)
		}
	}
}
