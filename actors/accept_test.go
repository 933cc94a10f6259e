package actors_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// gatedProvider holds every model call until gate is closed.
type gatedProvider struct {
	providers.Provider
	gate chan struct{}
}

func (p *gatedProvider) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	select {
	case <-p.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p.Provider.Stream(ctx, req)
}

// TestSession_Accept checks that Accept returns once the user message is
// journaled, while the turn goes on, and that the turn's result can be
// had afterwards by its id.
func TestSession_Accept(t *testing.T) {
	var model *gatedProvider
	f := newFixture(t, textScript("done"), nil, func(c *actors.Config) {
		model = &gatedProvider{Provider: c.Provider, gate: make(chan struct{})}
		c.Provider = model
	})
	acc, err := f.sess.Accept(t.Context(), messages.UserText("remember this"), actors.WithTurnID("client-1"))
	if err != nil {
		t.Fatal(err)
	}
	if acc.Session != "s1" || acc.Turn != 0 || acc.TurnID != "client-1" {
		t.Errorf("Accept = %+v", acc)
	}
	// The model has not answered yet, and the message is in the journal.
	var journaled, ended bool
	for e, err := range f.rt.Journal().Read(t.Context(), "s1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := e.Event.(type) {
		case messages.UserMessage:
			journaled = journaled || (ev.TurnID == "client-1" && ev.Message.Text() == "remember this")
		case messages.TurnCompleted:
			ended = true
		}
	}
	if !journaled || ended {
		t.Errorf("after Accept: user message journaled %v, turn ended %v; want true, false", journaled, ended)
	}
	// The same id again, while its turn runs, is accepted at once.
	if again, err := f.sess.Accept(t.Context(), messages.UserText("remember this"), actors.WithTurnID("client-1")); err != nil || again != acc {
		t.Errorf("Accept of the running turn's id = %+v, %v; want %+v", again, err, acc)
	}
	close(model.gate)
	res, err := f.sess.Submit(t.Context(), messages.UserText("remember this"), actors.WithTurnID("client-1"))
	if err != nil || res.Text != "done" || res.Turn != 0 {
		t.Fatalf("the accepted turn's result = %+v, %v", res, err)
	}
	if n := f.prov.Calls(); n != 1 {
		t.Errorf("the model was called %d times, want 1", n)
	}
	// A resubmission of the accepted id is accepted again, not run again.
	again, err := f.sess.Accept(t.Context(), messages.UserText("remember this"), actors.WithTurnID("client-1"))
	if err != nil || again.Turn != 0 || f.prov.Calls() != 1 {
		t.Errorf("Accept of a known id = %+v, %v; %d model calls", again, err, f.prov.Calls())
	}
	// A cancelled context gives up.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.sess.Accept(ctx, messages.UserText("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Accept with a cancelled context = %v", err)
	}
}
