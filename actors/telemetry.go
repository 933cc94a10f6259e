package actors

// This file holds the runtime's tracing seam: the few calls into package
// telemetry that the turn makes at its boundaries (the turn, each model
// call, each tool call, each approval wait and compaction), so that the
// turn's own code stays one line per boundary. With no TracerProvider and
// no MeterProvider each call returns at once.

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/telemetry"
	"github.com/agcore/agcore/toolsys"
)

// configureTelemetry builds the runtime's telemetry from the providers of
// Config.
func (rt *Runtime) configureTelemetry() error {
	rt.unobserve = func() error { return nil }
	tel, err := telemetry.New(telemetry.Config{
		TracerProvider: rt.cfg.TracerProvider,
		MeterProvider:  rt.cfg.MeterProvider,
		RecordContent:  rt.cfg.TraceContent,
		Redact:         rt.redactor.Content,
	})
	if err != nil {
		return configErr("MeterProvider", "%v", err)
	}
	rt.tel = tel
	return nil
}

// observeSessions reports the active sessions through the meter until
// Shutdown.
func (rt *Runtime) observeSessions() {
	unobserve, err := rt.tel.ObserveSessions(func() int { return len(rt.Sessions()) })
	if err != nil {
		rt.logger.Warn().Err(err).Msg("the active sessions gauge is not reported")
		return
	}
	rt.unobserve = unobserve
}

// traceTurn starts the span of t: a child of parent (the tool call that
// spawned a sub-agent) when it is valid, linked to the interrupted span a
// resumed turn names.
func (a *sessionActor) traceTurn(t *turnRun, parent, resumes trace.SpanContext) {
	t.ctx, t.span = a.rt.tel.StartTurn(t.ctx, telemetry.TurnStart{
		Session: a.id, Agent: a.st.Agent, TurnID: t.turnID, Turn: t.index, Parent: parent, Resumes: resumes,
	})
}

// endTurnSpan ends the span of t.
func (a *sessionActor) endTurnSpan(t *turnRun, outcome messages.TurnOutcome, reason string) {
	a.rt.tel.EndTurn(a.rt.ctx, t.span, telemetry.TurnEnd{Outcome: outcome, Reason: reason, Usage: t.usage, Cost: t.cost, RoundTrips: t.roundTrips})
}

// spanContext returns the span context of run's call, the parent of a
// sub-agent's turn; the zero value for none.
func (run *toolRun) spanContext() trace.SpanContext {
	if run == nil || run.span == nil {
		return trace.SpanContext{}
	}
	return run.span.SpanContext()
}

// traceTool starts the span of run's call under the turn's span, and
// returns the context the call runs in.
func (a *sessionActor) traceTool(ctx context.Context, run *toolRun) context.Context {
	if !a.rt.tel.Tracing() && !a.rt.tel.Metering() {
		return ctx
	}
	run.source = a.rt.tools.source(run.call.Name)
	ctx, run.span = a.rt.tel.StartTool(ctx, telemetry.ToolStart{
		Name: run.call.Name, CallID: run.call.ID, Source: run.source, Arguments: run.call.Arguments,
	})
	return ctx
}

// endToolSpan ends the span of run's call with its result.
func (a *sessionActor) endToolSpan(run *toolRun, res toolsys.Result, elapsed time.Duration) {
	if run.span == nil {
		return
	}
	a.rt.tel.EndTool(a.rt.ctx, run.span, telemetry.ToolEnd{
		Name: run.call.Name, Source: run.source, IsError: res.IsError, Timeout: run.timedOut, Elapsed: elapsed, Content: res.Content,
	})
}

// traceRefused records a call that never started: the agent may not call
// its tool, or a hook blocked it.
func (a *sessionActor) traceRefused(call messages.ToolCall, res toolsys.Result, decision string) {
	if !a.rt.tel.Tracing() && !a.rt.tel.Metering() {
		return
	}
	run := &toolRun{call: call}
	a.traceTool(a.turn.ctx, run)
	a.rt.tel.EndTool(a.rt.ctx, run.span, telemetry.ToolEnd{
		Name: call.Name, Source: run.source, IsError: res.IsError, Decision: decision, Content: res.Content,
	})
}

// source names where the named tool comes from, for its span and
// metrics: the runtime's own tools are "runtime", others what the
// registry of Config.Tools says (builtin when it cannot say).
func (ts *toolset) source(name string) string {
	if _, own := ts.kinds[name]; own {
		return string(toolsys.SourceRuntime)
	}
	if r, ok := ts.user.(interface {
		Info(string) (toolsys.ToolInfo, bool)
	}); ok {
		if info, ok := r.Info(name); ok && info.Source != "" {
			return string(info.Source)
		}
	}
	return string(toolsys.SourceBuiltin)
}

// providerName names the provider of the model reference ref, for the
// chat span: the part before the slash, or the default provider's name.
func (rt *Runtime) providerName(ref string) string {
	if name, _, ok := strings.Cut(ref, "/"); ok {
		return name
	}
	if _, name, ok := rt.providers.Default(); ok {
		return name
	}
	return "unknown"
}

// startChat starts the span of the model call and returns the call's
// context with it.
func (m *modelCall) startChat() context.Context {
	ctx, span := m.rt.tel.StartChat(m.ctx, telemetry.ChatStart{Provider: m.system, Model: m.req.Model, Messages: m.req.Messages})
	m.span = span
	return ctx
}

// endChat ends the span of the model call and records it.
func (m *modelCall) endChat(resp *messages.Response, err error, elapsed time.Duration) {
	e := telemetry.ChatEnd{Provider: m.system, Model: m.req.Model, Elapsed: elapsed, Err: err}
	if resp != nil {
		e.ResponseModel = resp.Model
		if e.ResponseModel == "" {
			e.ResponseModel = m.req.Model
		}
		e.FinishReason, e.Usage, e.Reply = resp.FinishReason, resp.Usage, &resp.Message
		e.Cost = m.rt.tracker.Price(e.ResponseModel).Cost(resp.Usage)
	}
	m.rt.tel.EndChat(m.rt.ctx, m.span, e)
}

// compactSpan starts the span of a compaction job, under the turn that
// asked for it.
func (j *compactJob) compactSpan() (context.Context, trace.Span) {
	ctx := j.rt.ctx
	if j.req.parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, j.req.parent)
	}
	return j.rt.tel.StartCompaction(ctx, j.req.session, j.req.forTurn)
}

// timedOut reports whether err says a tool call's deadline passed.
func timedOut(err error) bool { return errors.Is(err, context.DeadlineExceeded) }

// providerNameFor names the provider of ag's model, "" when nothing is
// recorded.
func (a *sessionActor) providerNameFor(ag *agent) string {
	if !a.rt.tel.Tracing() && !a.rt.tel.Metering() {
		return ""
	}
	ref := ag.Model
	if ref == "" {
		ref = a.rt.cfg.Model
	}
	return a.rt.providerName(ref)
}
