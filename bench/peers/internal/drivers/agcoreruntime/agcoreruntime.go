// Package agcoreruntime runs the workload through agcore's actor runtime:
// every turn opens a fresh session (an actor, activated from the journal),
// submits the question, and reads the turn's result. The runtime streams
// every model call, runs the tool under its supervisor, and journals each
// step to an in-memory Badger store (no fsync), which none of the other
// peers does at all.
package agcoreruntime

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/bench/peers/internal/drivers/agcoreloop"
	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/openai"
)

// Peer is agcore's actor runtime.
var Peer = harness.Peer{Name: "agcore-runtime", New: New}

// IdleTimeout is how long a finished session stays active before it is
// passivated, so that the memory of finished conversations is given back
// during the run instead of piling up.
const IdleTimeout = time.Second

type driver struct {
	rt   *actors.Runtime
	next atomic.Uint64
}

// New returns the agcore-runtime driver.
func New(_ context.Context, env harness.Env) (harness.Driver, error) {
	model, err := openai.New(openai.Options{BaseURL: env.BaseURL, HTTPClient: env.HTTPClient, Model: workload.Model})
	if err != nil {
		return nil, fmt.Errorf("agcore-runtime: %w", err)
	}
	reg, err := agcoreloop.Registry()
	if err != nil {
		return nil, err
	}
	rt, err := actors.NewInMemory(actors.Config{
		Provider:    model,
		Model:       workload.Model,
		Tools:       reg,
		BasePrompt:  workload.SystemPrompt,
		IdleTimeout: IdleTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("agcore-runtime: %w", err)
	}
	return &driver{rt: rt}, nil
}

func (d *driver) Turn(ctx context.Context) error {
	s, err := d.rt.Open(ctx, fmt.Sprintf("bench-%d", d.next.Add(1)))
	if err != nil {
		return fmt.Errorf("agcore-runtime: %w", err)
	}
	res, err := s.Submit(ctx, messages.UserText(workload.Prompt))
	if err != nil {
		return fmt.Errorf("agcore-runtime: %w", err)
	}
	if res.Outcome != messages.OutcomeCompleted {
		return fmt.Errorf("agcore-runtime: turn ended %s: %s", res.Outcome, res.Reason)
	}
	return workload.CheckAnswer(res.Text)
}

func (d *driver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return d.rt.Shutdown(ctx)
}
