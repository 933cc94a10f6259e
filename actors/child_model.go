package actors

// This file holds modelCall, one model request a session runs off its
// mailbox.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/supervisor"
)

// modelCall is one model request of a session's turn: it layers the
// system prompt, streams the reply (forwarding text deltas to the
// session), and retries what the decider says is worth retrying, with the
// PreRequest, OnRetry and OnError hooks around each attempt. It is the only
// retry layer of a model call: the provider's own layer, if it has one, is
// taken off (providers.SingleAttempt). It runs as work the session starts
// (on the runtime's workers, never in the session's mailbox), is
// cancelled with the turn's context, and reports with modelDelta and
// modelDone; a panic fails the call.
type modelCall struct {
	rt       *Runtime
	gen      uint64
	ctx      context.Context
	provider providers.Provider
	// chat asks for the complete reply (Provider.Chat) instead of
	// streaming it.
	chat   bool
	req    *messages.Request
	prompt promptInput
	layers *promptLayers // the layers the call used, for the session to keep
	hc     HookContext
	log    zerolog.Logger
	// deltas says whether to forward the pieces of the reply to the
	// session (see turnRun); nil forwards them.
	deltas *atomic.Bool
	// system names the provider and span is the call's span, for
	// telemetry (see startChat).
	system string
	span   trace.Span
}

// run makes the call, sending its text deltas to the session through
// send, and returns its report, a *modelDone.
func (m *modelCall) run(send func(any)) (report any) {
	start := m.rt.clock.Now()
	m.ctx = m.startChat()
	defer func() {
		if v := recover(); v != nil {
			m.log.Error().Interface("panic", v).Str("stack", string(debug.Stack())).Msg("model call panicked")
			err := fmt.Errorf("model call panicked: %v", v)
			m.endChat(nil, err, m.rt.clock.Now().Sub(start))
			report = &modelDone{gen: m.gen, req: m.req, err: err}
		}
	}()
	resp, err := m.call(send)
	m.endChat(resp, err, m.rt.clock.Now().Sub(start))
	return &modelDone{gen: m.gen, req: m.req, resp: resp, err: err, prompt: m.layers}
}

func (m *modelCall) call(send func(any)) (*messages.Response, error) {
	system, layers, err := m.rt.systemPrompt(m.ctx, m.prompt)
	m.layers = &layers
	if err != nil {
		return nil, err
	}
	if system != "" {
		msgs := make([]messages.Message, 0, len(m.req.Messages)+1)
		m.req.Messages = append(append(msgs, messages.SystemText(system)), m.req.Messages...)
	}
	provider := providers.SingleAttempt(m.provider)
	resp, err := providers.Retry(m.ctx, m.retryPolicy(), func(ctx context.Context) (*messages.Response, error) {
		hc := m.hc
		hc.Event, hc.Request = PreRequest, m.req
		if reason, ok := blocked(m.rt.hooks.run(m.ctx, m.log, hc), "blocked by a pre-request hook"); ok {
			return nil, &blockedError{reason: reason}
		}
		return m.stream(ctx, send, provider)
	})
	switch {
	case err == nil:
		return resp, nil
	case m.ctx.Err() != nil:
		return nil, fmt.Errorf("model call: %w", context.Cause(m.ctx))
	case errors.As(err, new(*blockedError)):
		return nil, err
	}
	hc := m.hc
	hc.Event, hc.Err = OnError, err
	m.rt.hooks.run(m.ctx, m.log, hc)
	return nil, err
}

// retryPolicy returns the runtime's retry policy (Runtime.retry) for this
// call: the OnRetry hooks run (after Config.Retry.OnRetry) before each
// wait.
func (m *modelCall) retryPolicy() providers.RetryPolicy {
	p := m.rt.retry
	onRetry := p.OnRetry
	p.OnRetry = func(retry int, err error, delay time.Duration) {
		if onRetry != nil {
			onRetry(retry, err, delay)
		}
		hc := m.hc
		hc.Event, hc.Err, hc.Attempt = OnRetry, err, retry
		m.rt.hooks.run(m.ctx, m.log, hc)
		m.rt.tel.ChatRetry(m.span, retry, err, delay)
		m.log.Warn().Err(err).Int("attempt", retry).Dur("delay", delay).Msg("retrying model call")
	}
	return p
}

// stream makes one attempt with provider, forwarding text deltas to the
// session: as they stream, or the whole text as one delta when the call
// asks for the complete reply. ctx is the call's context, numbered by the
// retry policy.
func (m *modelCall) stream(ctx context.Context, send func(any), provider providers.Provider) (*messages.Response, error) {
	if m.chat {
		resp, err := provider.Chat(ctx, *m.req)
		if err != nil {
			return nil, err
		}
		if text := resp.Message.Text(); text != "" && (m.deltas == nil || m.deltas.Load()) {
			send(&modelDelta{gen: m.gen, text: text})
		}
		return resp, nil
	}
	s, err := provider.Stream(ctx, *m.req)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for c, err := range providers.Chunks(s) {
		if err != nil {
			return nil, err
		}
		if c.Text != "" && (m.deltas == nil || m.deltas.Load()) {
			send(&modelDelta{gen: m.gen, text: c.Text})
		}
	}
	resp := s.Response()
	if resp == nil {
		return nil, errors.New("model call: the stream ended without a response")
	}
	return resp, nil
}

// retryPolicy returns Config.Retry with the decider choosing what is
// retried (providers.IsRetryable unless Config.Retry.Retryable is set),
// and the runtime's clock and jitter source standing in for Sleep and
// Rand when they are nil.
func (rt *Runtime) retryPolicy() providers.RetryPolicy {
	p := rt.cfg.Retry
	decider := supervisor.RetryDecider(providers.IsRetryable)
	if p.Retryable != nil {
		decider = supervisor.RetryDecider(p.Retryable)
	}
	p.Retryable = func(err error) bool { return decider.Decide(err) == supervisor.Retry }
	if p.Sleep == nil {
		p.Sleep = rt.sleep
	}
	if p.Rand == nil {
		p.Rand = func() float64 { return float64(rt.rnd.Int64N(1<<53)) / (1 << 53) }
	}
	return p
}
