package actors_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
)

// panickySummariser panics on the summary request (the one whose system
// prompt asks for a summary) and passes the others to inner.
type panickySummariser struct {
	inner  providers.Provider
	panics atomic.Int32
}

func (p *panickySummariser) check(req messages.Request) {
	if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Text(), "Summarise the conversation") {
		p.panics.Add(1)
		panic("summariser bug")
	}
}

func (p *panickySummariser) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	p.check(req)
	return p.inner.Chat(ctx, req)
}

func (p *panickySummariser) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	p.check(req)
	return p.inner.Stream(ctx, req)
}

// TestCompaction_SummariserPanicFailsTheTurn makes the summariser panic on
// a compaction a turn waits for: the turn ends (failed, naming the
// compaction) instead of waiting forever, the summary is not retried in a
// loop, and the session takes the next turn.
func TestCompaction_SummariserPanicFailsTheTurn(t *testing.T) {
	script := scripted.Script{
		Rules: []scripted.Rule{{Name: "chat", Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "hello"}}},
		// Call 2 is the model call of the second turn.
		Failures: []scripted.Injection{{Calls: []int{2}, Failure: scripted.Failure{Kind: scripted.FailContextLength}}},
	}
	prov := &panickySummariser{inner: scripted.MustNew(script, scripted.Options{})}
	f := newFixture(t, textScript("unused"), nil, func(c *actors.Config) {
		c.Provider = prov
		c.Model = "default/chat-model"
		c.Compaction.SummaryModel = "default/cheap-model"
		c.Compaction.Config = memory.CompactionConfig{KeepRecent: 1}
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("hi")); err != nil {
		t.Fatal(err)
	}
	// A bound so that the old behaviour (waiting forever) fails here
	// rather than at the test binary's timeout.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := f.sess.Submit(ctx, messages.UserText("hi again"))
	if err != nil && ctx.Err() != nil {
		t.Fatalf("the turn is still waiting for the compaction: %v", err)
	}
	if res == nil || res.Outcome != messages.OutcomeFailed || !strings.Contains(res.Reason, "compaction") {
		t.Fatalf("turn = %+v, %v; want it failed naming the compaction", res, err)
	}
	if n := prov.panics.Load(); n != 1 {
		t.Errorf("the summariser was asked %d times, want once", n)
	}
	if res, err := f.sess.Submit(t.Context(), messages.UserText("still there?")); err != nil || res.Outcome != messages.OutcomeCompleted {
		t.Fatalf("next turn = %+v, %v", res, err)
	}
}

// panickyKnowledge is a knowledge base whose queries panic.
type panickyKnowledge struct{ queries atomic.Int32 }

func (k *panickyKnowledge) Query(context.Context, string, int) ([]actors.Passage, error) {
	k.queries.Add(1)
	panic("index bug")
}

// TestRetrieve_KnowledgePanicIsAnError makes the knowledge base panic:
// the turn, whose prompt needs the retrieved passages, fails naming the
// panic instead of waiting for an answer that never comes, and the next
// turn's query still reaches the knowledge base.
func TestRetrieve_KnowledgePanicIsAnError(t *testing.T) {
	kb := &panickyKnowledge{}
	f := newFixture(t, textScript("answered"), nil, func(c *actors.Config) {
		c.Knowledge = kb
		c.Agents = []actors.AgentProfile{{Name: "librarian", Retrieve: true}}
	})
	for i := range 2 {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		res, err := f.sess.Submit(ctx, messages.UserText("what is supervision?"))
		waited := ctx.Err()
		cancel()
		if waited != nil {
			t.Fatalf("turn %d is still waiting for the knowledge base: %v", i+1, err)
		}
		if res == nil || res.Outcome != messages.OutcomeFailed || !strings.Contains(res.Reason, "panic: index bug") {
			t.Fatalf("turn %d = %+v, %v; want it failed naming the panic", i+1, res, err)
		}
	}
	if n := kb.queries.Load(); n != 2 {
		t.Errorf("knowledge queried %d times, want 2", n)
	}
}
