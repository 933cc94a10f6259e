package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/supervisor"
)

// modelCall is the child that runs one model request: it layers the system
// prompt, streams the reply (forwarding text deltas to the session), and
// retries what the decider says is worth retrying, with the PreRequest,
// OnRetry and OnError hooks around each attempt. It blocks its own mailbox,
// never the session's, and stops when done.
type modelCall struct {
	rt       *Runtime
	gen      uint64
	ctx      context.Context
	provider providers.Provider
	req      *messages.Request
	prompt   promptInput
	hc       HookContext
	log      zerolog.Logger
}

// Receive implements actor.Actor.
func (m *modelCall) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); !ok {
		return
	}
	resp, err := m.run(ctx)
	ctx.Send(ctx.Parent(), &modelDone{gen: m.gen, req: m.req, resp: resp, err: err})
	ctx.Stop(ctx.Self())
}

func (m *modelCall) run(actx actor.Context) (*messages.Response, error) {
	system, err := m.rt.systemPrompt(m.ctx, m.prompt)
	if err != nil {
		return nil, err
	}
	if system != "" {
		m.req.Messages = append([]messages.Message{messages.SystemText(system)}, m.req.Messages...)
	}
	maxRetries := m.rt.cfg.Retry.MaxRetries
	switch {
	case maxRetries < 0:
		maxRetries = 0
	case maxRetries == 0:
		maxRetries = providers.DefaultMaxRetries
	}
	for attempt := 1; ; attempt++ {
		hc := m.hc
		hc.Event, hc.Request = PreRequest, m.req
		if reason, ok := blocked(m.rt.hooks.run(m.ctx, m.log, &hc), "blocked by a pre-request hook"); ok {
			return nil, &BlockedError{Reason: reason}
		}
		resp, err := m.stream(actx)
		if err == nil {
			return resp, nil
		}
		if m.ctx.Err() != nil {
			return nil, fmt.Errorf("model call: %w", context.Cause(m.ctx))
		}
		if attempt > maxRetries || m.rt.modelDecider.Decide(err) != supervisor.Retry {
			hc := m.hc
			hc.Event, hc.Err = OnError, err
			m.rt.hooks.run(m.ctx, m.log, &hc)
			return nil, err
		}
		hc = m.hc
		hc.Event, hc.Err, hc.Attempt = OnRetry, err, attempt
		m.rt.hooks.run(m.ctx, m.log, &hc)
		delay := m.rt.cfg.Retry.Delay(attempt, err)
		m.log.Warn().Err(err).Int("attempt", attempt).Dur("delay", delay).Msg("retrying model call")
		if err := m.sleep(delay); err != nil {
			return nil, fmt.Errorf("model call: %w", err)
		}
	}
}

// stream makes one attempt, forwarding text deltas to the session.
func (m *modelCall) stream(actx actor.Context) (*messages.Response, error) {
	s, err := m.provider.Stream(m.ctx, *m.req)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for c, err := range providers.Chunks(s) {
		if err != nil {
			return nil, err
		}
		if c.Text != "" {
			actx.Send(actx.Parent(), &modelDelta{gen: m.gen, text: c.Text})
		}
	}
	resp := s.Response()
	if resp == nil {
		return nil, errors.New("model call: the stream ended without a response")
	}
	return resp, nil
}

func (m *modelCall) sleep(d time.Duration) error {
	if m.rt.cfg.Retry.Sleep != nil {
		return m.rt.cfg.Retry.Sleep(m.ctx, d)
	}
	done := make(chan struct{})
	stop := m.rt.clock.AfterFunc(d, func() { close(done) })
	defer stop()
	select {
	case <-done:
		return nil
	case <-m.ctx.Done():
		return m.ctx.Err()
	}
}
