package telemetry

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// none is the span the tracing calls return when nothing is traced: the
// API's no-op span, already boxed, so that returning it allocates nothing.
func none() trace.Span { return trace.SpanFromContext(context.Background()) }

// TurnStart describes a turn as it starts.
type TurnStart struct {
	Session string
	Agent   string
	TurnID  string
	Turn    int
	// Parent is the span of the tool call that spawned this sub-agent
	// turn. The zero value starts the turn's own trace (or continues the
	// one in the context).
	Parent trace.SpanContext
	// Resumes is the span of the turn a crash interrupted and this one
	// resumes; the turn's span links to it. The zero value links nothing.
	Resumes trace.SpanContext
}

// StartTurn starts the invoke_agent span of a turn and returns a context
// that carries it, for the turn's model and tool calls.
func (t *Telemetry) StartTurn(ctx context.Context, s TurnStart) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, none()
	}
	if s.Parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, s.Parent)
	}
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			keyOperation.String(OpInvokeAgent),
			keyAgentName.String(s.Agent),
			keyConversation.String(s.Session),
			KeyTurnID.String(s.TurnID),
			KeyTurnIndex.Int(s.Turn),
		),
	}
	if s.Resumes.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: s.Resumes, Attributes: []attribute.KeyValue{
			attribute.String("agcore.link", "resumes"),
		}}))
	}
	return t.tracer.Start(ctx, OpInvokeAgent+" "+s.Agent, opts...)
}

// TurnEnd describes how a turn ended.
type TurnEnd struct {
	Outcome    messages.TurnOutcome
	Reason     string
	Usage      messages.Usage
	Cost       float64
	RoundTrips int
}

// EndTurn ends a turn's span and counts the turn by outcome.
func (t *Telemetry) EndTurn(ctx context.Context, span trace.Span, e TurnEnd) {
	if t.Metering() {
		t.m.turn(ctx, e.Outcome)
	}
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(
		KeyOutcome.String(string(e.Outcome)),
		keyInputTokens.Int64(e.Usage.PromptTokens),
		keyOutputTokens.Int64(e.Usage.CompletionTokens),
		KeyCost.Float64(e.Cost),
		KeyRoundTrips.Int(e.RoundTrips),
	)
	if e.Reason != "" {
		span.SetAttributes(KeyReason.String(t.safe(e.Reason)))
	}
	if e.Outcome == messages.OutcomeFailed {
		span.SetStatus(codes.Error, t.safe(e.Reason))
	}
	span.End()
}

// ChatStart describes a model call as it starts.
type ChatStart struct {
	// Provider names the provider ("openai"), Model the model requested.
	Provider string
	Model    string
	// Messages are the request's messages, recorded only with
	// Config.RecordContent.
	Messages []messages.Message
}

// StartChat starts the chat span of a model call.
func (t *Telemetry) StartChat(ctx context.Context, s ChatStart) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, none()
	}
	name := OpChat
	if s.Model != "" {
		name += " " + s.Model
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		keyOperation.String(OpChat),
		keyProvider.String(s.Provider),
		KeySystem.String(s.Provider),
		keyRequestModel.String(s.Model),
		KeyStreaming.Bool(true),
	))
	if t.content && len(s.Messages) > 0 {
		span.SetAttributes(keyInputMessages.String(t.jsonText(s.Messages)))
	}
	return ctx, span
}

// ChatRetry records a retry of a model call as an event on its span.
func (t *Telemetry) ChatRetry(span trace.Span, attempt int, err error, delay time.Duration) {
	if !span.IsRecording() {
		return
	}
	span.AddEvent("retry", trace.WithAttributes(
		KeyAttempt.Int(attempt),
		keyErrorType.String(errorType(err)),
		attribute.String("exception.message", t.safe(err.Error())),
		KeyDelay.Float64(delay.Seconds()),
	))
}

// ChatEnd describes how a model call ended.
type ChatEnd struct {
	Provider      string
	Model         string // the model requested
	ResponseModel string // the model that answered, "" when it failed
	FinishReason  messages.FinishReason
	Usage         messages.Usage
	Cost          float64
	Elapsed       time.Duration
	// Err is the call's failure; nil when it answered.
	Err error
	// Reply is the answer, recorded only with Config.RecordContent.
	Reply *messages.Message
}

// EndChat ends a model call's span and records its latency, tokens and
// cost.
func (t *Telemetry) EndChat(ctx context.Context, span trace.Span, e ChatEnd) {
	if t.Metering() {
		t.m.chat(ctx, e)
	}
	if !span.IsRecording() {
		return
	}
	if e.Err != nil {
		span.SetAttributes(keyErrorType.String(errorType(e.Err)))
		span.SetStatus(codes.Error, t.safe(e.Err.Error()))
		span.End()
		return
	}
	span.SetAttributes(
		keyResponseModel.String(e.ResponseModel),
		keyFinishReasons.StringSlice([]string{string(e.FinishReason)}),
		keyInputTokens.Int64(e.Usage.PromptTokens),
		keyOutputTokens.Int64(e.Usage.CompletionTokens),
		KeyCost.Float64(e.Cost),
	)
	if t.content && e.Reply != nil {
		span.SetAttributes(keyOutputMessage.String(t.jsonText([]messages.Message{*e.Reply})))
	}
	span.End()
}

// ToolStart describes a tool call as it starts.
type ToolStart struct {
	Name   string
	CallID string
	Source string
	// Arguments are recorded only with Config.RecordContent.
	Arguments string
}

// StartTool starts the execute_tool span of a tool call.
func (t *Telemetry) StartTool(ctx context.Context, s ToolStart) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, none()
	}
	ctx, span := t.tracer.Start(ctx, OpExecuteTool+" "+s.Name, trace.WithAttributes(
		keyOperation.String(OpExecuteTool),
		keyToolName.String(s.Name),
		keyToolCallID.String(s.CallID),
		keyToolType.String("function"),
		KeySource.String(s.Source),
	))
	if t.content && s.Arguments != "" {
		span.SetAttributes(keyToolArguments.String(t.text(s.Arguments)))
	}
	return ctx, span
}

// ToolEnd describes how a tool call ended.
type ToolEnd struct {
	Name    string
	Source  string
	IsError bool
	Timeout bool
	// Decision is "blocked" for a call a hook refused; "" leaves the
	// decision an approval recorded (see EndApproval).
	Decision string
	Elapsed  time.Duration
	// Content is the result, recorded only with Config.RecordContent.
	Content string
}

// EndTool ends a tool call's span and records the call.
func (t *Telemetry) EndTool(ctx context.Context, span trace.Span, e ToolEnd) {
	if t.Metering() {
		t.m.tool(ctx, e)
	}
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(KeyIsError.Bool(e.IsError), KeyTimeout.Bool(e.Timeout))
	if e.Decision != "" {
		span.SetAttributes(KeyDecision.String(e.Decision))
	}
	if t.content && e.Content != "" {
		span.SetAttributes(keyToolResult.String(t.text(e.Content)))
	}
	if e.IsError {
		span.SetStatus(codes.Error, "the tool returned an error result")
	}
	span.End()
}

// StartApproval starts the span of the wait for a tool call's approval;
// ctx is the call's.
func (t *Telemetry) StartApproval(ctx context.Context, tool, callID string) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, none()
	}
	return t.tracer.Start(ctx, OpAwaitApproval+" "+tool, trace.WithAttributes(
		keyOperation.String(OpAwaitApproval),
		keyToolName.String(tool),
		keyToolCallID.String(callID),
	))
}

// EndApproval ends an approval wait with its decision, which it also
// records on the tool call's span (the span of ctx, the call's context).
// err is set when the wait ended without a decision.
func (t *Telemetry) EndApproval(ctx context.Context, span trace.Span, allow bool, by string, err error) {
	if !span.IsRecording() {
		return
	}
	decision := "denied"
	if allow {
		decision = "granted"
	}
	if err != nil {
		decision = "unanswered"
		span.SetAttributes(keyErrorType.String(errorType(err)))
	}
	span.SetAttributes(KeyDecision.String(decision))
	if by != "" {
		span.SetAttributes(KeyDecidedBy.String(by))
	}
	span.End()
	trace.SpanFromContext(ctx).SetAttributes(KeyDecision.String(decision))
}

// StartCompaction starts the span of a compaction of session's history;
// forTurn says that the running turn waits for it.
func (t *Telemetry) StartCompaction(ctx context.Context, session string, forTurn bool) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, none()
	}
	return t.tracer.Start(ctx, OpCompact, trace.WithAttributes(
		keyOperation.String(OpCompact),
		keyConversation.String(session),
		KeyForTurn.Bool(forTurn),
	))
}

// EndCompaction ends a compaction's span.
func (t *Telemetry) EndCompaction(span trace.Span, ev *messages.Compacted, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, t.safe(err.Error()))
	} else if ev != nil {
		span.SetAttributes(KeyCompactionKind.String(ev.Kind), KeyTokensBefore.Int(ev.TokensBefore), KeyTokensAfter.Int(ev.TokensAfter))
	}
	span.End()
}

// safe returns a reason or error text as spans may carry it: redacted
// when a redactor is configured.
func (t *Telemetry) safe(s string) string {
	if t.redact == nil {
		return s
	}
	return t.redact(s)
}

// jsonText returns msgs as redacted JSON.
func (t *Telemetry) jsonText(msgs []messages.Message) string {
	b, err := json.Marshal(msgs)
	if err != nil {
		return ""
	}
	return t.text(string(b))
}

// errorType names an error's kind for error.type: the provider error
// kinds (rate_limit, server, timeout, canceled, ...), "other" for the rest;
// the message goes to the span's status.
func errorType(err error) string { return providers.KindOf(err).String() }
