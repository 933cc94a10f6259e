package actors_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// windowProvider is a model with a context window: it refuses a request
// whose messages are estimated above limit tokens with a context-length
// error, as an endpoint does, and answers the others with inner.
type windowProvider struct {
	inner   providers.Provider
	limit   int
	refused atomic.Int32
	largest atomic.Int64
}

func (p *windowProvider) check(req messages.Request) error {
	n := memory.Heuristic{}.CountMessages(req.Messages)
	if int64(n) > p.largest.Load() {
		p.largest.Store(int64(n))
	}
	if n > p.limit {
		p.refused.Add(1)
		return &providers.Error{Kind: providers.KindContextLength, Status: 400, Provider: "window",
			Message: "This model's maximum context length is exceeded"}
	}
	return nil
}

func (p *windowProvider) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	if err := p.check(req); err != nil {
		return nil, err
	}
	return p.inner.Chat(ctx, req)
}

func (p *windowProvider) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	if err := p.check(req); err != nil {
		return nil, err
	}
	return p.inner.Stream(ctx, req)
}

// bigTool returns 1,500 characters (2,000 estimated tokens) per call.
func bigTool() *funcTool {
	return &funcTool{name: "big", perm: toolsys.PermReadOnly, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{Content: strings.Repeat("lorem ipsu", 150)}, nil
	}}
}

// loopScript calls big three times in a row, then answers.
func loopScript() scripted.Script {
	big := scripted.ToolCall{Name: "big", Arguments: "{}"}
	return scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{big}}},
		{Match: scripted.Match{Tool: "big"}, Turns: []scripted.Reply{
			{ToolCalls: []scripted.ToolCall{big}}, {ToolCalls: []scripted.ToolCall{big}}, {Text: "done"},
		}},
	}}
}

// TestCompaction_AfterEachToolRound runs a tool loop whose history grows
// past the compaction threshold mid-turn, with a model that refuses
// requests beyond its window: the session compacts after the tool round
// that crossed the threshold, before asking the model again, so that no
// request is refused.
func TestCompaction_AfterEachToolRound(t *testing.T) {
	model := &windowProvider{inner: scripted.MustNew(loopScript(), scripted.Options{}), limit: 5000}
	f := newFixture(t, textScript("unused"), []toolsys.Tool{bigTool()}, func(c *actors.Config) {
		c.Provider = model
		c.Compaction.Config = memory.CompactionConfig{ContextWindow: 3000, ReservedOutput: -1, Buffer: -1, KeepRecent: 2}
	})
	var order []string
	for ev, err := range f.sess.Stream(t.Context(), messages.UserText("read it all")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case messages.ToolFinished:
			order = append(order, "tool")
		case messages.ContextCompacted:
			order = append(order, "compacted:"+e.Kind)
		case messages.TurnEnded:
			if e.Outcome != messages.OutcomeCompleted || e.Text != "done" {
				t.Fatalf("turn ended %+v", e)
			}
		}
	}
	if n := model.refused.Load(); n != 0 {
		t.Errorf("the model refused %d requests as too long (largest %d tokens)", n, model.largest.Load())
	}
	want := "tool tool compacted:micro tool compacted:micro"
	if got := strings.Join(order, " "); !strings.HasPrefix(got, want) {
		t.Errorf("events %q, want them to start with %q", got, want)
	}
}

// TestCompaction_ContextLengthRefusalCompactsOnce plays a turn whose
// request a model refuses as too long: the session compacts once and
// retries, and the turn completes; when the compacted request is still too
// long, the turn fails after that one compaction instead of looping.
func TestCompaction_ContextLengthRefusalCompactsOnce(t *testing.T) {
	tests := []struct {
		name        string
		limit       int
		wantRefused int32
		wantOutcome messages.TurnOutcome
	}{
		{"the retry fits", 5000, 1, messages.OutcomeCompleted},
		// The second request (2,034 tokens) fits, the third does not,
		// and pruning the first tool result leaves it above 2,050.
		{"the retry is still too long", 2050, 2, messages.OutcomeFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &windowProvider{inner: scripted.MustNew(loopScript(), scripted.Options{}), limit: tt.limit}
			f := newFixture(t, textScript("unused"), []toolsys.Tool{bigTool()}, func(c *actors.Config) {
				c.Provider = model
				// A window the session believes large: only the model's
				// refusal makes it compact.
				c.Compaction.Config = memory.CompactionConfig{ContextWindow: 1_000_000, KeepRecent: 2}
			})
			var compactions int
			var end messages.TurnEnded
			for ev, err := range f.sess.Stream(t.Context(), messages.UserText("read it all")) {
				if err != nil {
					t.Fatal(err)
				}
				switch e := ev.(type) {
				case messages.ContextCompacted:
					compactions++
				case messages.TurnEnded:
					end = e
				}
			}
			if n := model.refused.Load(); n != tt.wantRefused || compactions != 1 || end.Outcome != tt.wantOutcome {
				t.Errorf("%d refusals, %d compactions, outcome %s (%s); want %d, 1, %s", n, compactions, end.Outcome, end.Reason, tt.wantRefused, tt.wantOutcome)
			}
		})
	}
}
