package telemetry

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agcore/agcore/messages"
)

// The metrics agcore records, by instrument name. A Prometheus exposition
// writes them with dots as underscores, counters with _total and seconds
// with _seconds (agcore.turns is agcore_turns_total).
const (
	MetricTurns         = "agcore.turns"          // counter {outcome}
	MetricModelCalls    = "agcore.model.calls"    // counter {model}
	MetricTokens        = "agcore.tokens"         // counter {model, kind=prompt|completion}
	MetricCost          = "agcore.cost"           // counter {model}
	MetricModelDuration = "agcore.model.duration" // histogram, s {model}
	MetricToolCalls     = "agcore.tool.calls"     // counter {tool, source}
	MetricToolErrors    = "agcore.tool.errors"    // counter {tool, source}
	MetricToolTimeouts  = "agcore.tool.timeouts"  // counter {tool, source}
	MetricToolDuration  = "agcore.tool.duration"  // histogram, s {tool, source}
	MetricSessions      = "agcore.sessions.active"
	MetricRestarts      = "agcore.restarts" // counter {supervisor=session|mcp}
	// The GenAI client metrics of the semantic conventions.
	MetricGenAITokens   = "gen_ai.client.token.usage"
	MetricGenAIDuration = "gen_ai.client.operation.duration"
)

// MetricNames lists every metric agcore records.
func MetricNames() []string {
	return []string{MetricTurns, MetricModelCalls, MetricTokens, MetricCost, MetricModelDuration,
		MetricToolCalls, MetricToolErrors, MetricToolTimeouts, MetricToolDuration, MetricSessions,
		MetricRestarts, MetricGenAITokens, MetricGenAIDuration}
}

// durationBuckets are the histogram bounds, in seconds, of model and tool
// latencies: from 5 ms to 5 minutes.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// tokenBuckets are the bounds of gen_ai.client.token.usage.
var tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576}

type instruments struct {
	meter         metric.Meter
	turns         metric.Int64Counter
	modelCalls    metric.Int64Counter
	tokens        metric.Int64Counter
	cost          metric.Float64Counter
	modelDuration metric.Float64Histogram
	toolCalls     metric.Int64Counter
	toolErrors    metric.Int64Counter
	toolTimeouts  metric.Int64Counter
	toolDuration  metric.Float64Histogram
	sessions      metric.Int64ObservableGauge
	restarts      metric.Int64Counter
	genaiTokens   metric.Int64Histogram
	genaiDuration metric.Float64Histogram
}

func newInstruments(m metric.Meter) (*instruments, error) {
	in := &instruments{meter: m}
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error
	in.turns, err = m.Int64Counter(MetricTurns, metric.WithDescription("Turns ended, by outcome."))
	add(err)
	in.modelCalls, err = m.Int64Counter(MetricModelCalls, metric.WithDescription("Model calls, by model."))
	add(err)
	in.tokens, err = m.Int64Counter(MetricTokens, metric.WithDescription("Tokens used, by model and kind (prompt, completion)."))
	add(err)
	in.cost, err = m.Float64Counter(MetricCost, metric.WithDescription("Cost of the model calls, by model, in the price table's currency."))
	add(err)
	in.modelDuration, err = m.Float64Histogram(MetricModelDuration, metric.WithUnit("s"),
		metric.WithDescription("Model call latency, retries included, by model."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	add(err)
	in.toolCalls, err = m.Int64Counter(MetricToolCalls, metric.WithDescription("Tool calls ended, by tool and source."))
	add(err)
	in.toolErrors, err = m.Int64Counter(MetricToolErrors, metric.WithDescription("Tool calls that ended in an error, by tool and source."))
	add(err)
	in.toolTimeouts, err = m.Int64Counter(MetricToolTimeouts, metric.WithDescription("Tool calls whose deadline passed, by tool and source."))
	add(err)
	in.toolDuration, err = m.Float64Histogram(MetricToolDuration, metric.WithUnit("s"),
		metric.WithDescription("Tool call latency, by tool and source."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	add(err)
	in.sessions, err = m.Int64ObservableGauge(MetricSessions, metric.WithDescription("Sessions whose actor is running."))
	add(err)
	in.restarts, err = m.Int64Counter(MetricRestarts, metric.WithDescription("Actors restarted by their supervisor, by supervisor."))
	add(err)
	in.genaiTokens, err = m.Int64Histogram(MetricGenAITokens, metric.WithUnit("{token}"),
		metric.WithDescription("Tokens used per model call (GenAI semantic conventions)."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	add(err)
	in.genaiDuration, err = m.Float64Histogram(MetricGenAIDuration, metric.WithUnit("s"),
		metric.WithDescription("Model call duration (GenAI semantic conventions)."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *instruments) turn(ctx context.Context, outcome messages.TurnOutcome) {
	in.turns.Add(ctx, 1, metric.WithAttributes(KeyMetricOutcome.String(string(outcome))))
}

func (in *instruments) chat(ctx context.Context, e ChatEnd) {
	model := e.ResponseModel
	if model == "" {
		model = e.Model
	}
	byModel := metric.WithAttributeSet(attribute.NewSet(KeyModel.String(model)))
	in.modelCalls.Add(ctx, 1, byModel)
	in.modelDuration.Record(ctx, e.Elapsed.Seconds(), byModel)
	genai := []attribute.KeyValue{keyOperation.String(OpChat), keyProvider.String(e.Provider), keyRequestModel.String(e.Model)}
	if e.Err != nil {
		genai = append(genai, keyErrorType.String(errorType(e.Err)))
	} else {
		genai = append(genai, keyResponseModel.String(model))
	}
	in.genaiDuration.Record(ctx, e.Elapsed.Seconds(), metric.WithAttributes(genai...))
	if e.Err != nil {
		return
	}
	in.tokens.Add(ctx, e.Usage.PromptTokens, metric.WithAttributes(KeyModel.String(model), KeyKind.String("prompt")))
	in.tokens.Add(ctx, e.Usage.CompletionTokens, metric.WithAttributes(KeyModel.String(model), KeyKind.String("completion")))
	in.cost.Add(ctx, e.Cost, byModel)
	in.genaiTokens.Record(ctx, e.Usage.PromptTokens, metric.WithAttributes(append(genai, keyTokenType.String("input"))...))
	in.genaiTokens.Record(ctx, e.Usage.CompletionTokens, metric.WithAttributes(append(genai, keyTokenType.String("output"))...))
}

func (in *instruments) tool(ctx context.Context, e ToolEnd) {
	attrs := metric.WithAttributeSet(attribute.NewSet(KeyTool.String(e.Name), KeyMetricSource.String(e.Source)))
	in.toolCalls.Add(ctx, 1, attrs)
	// Every series exists from the first call on, at zero until it counts.
	in.toolErrors.Add(ctx, b2i(e.IsError), attrs)
	in.toolTimeouts.Add(ctx, b2i(e.Timeout), attrs)
	in.toolDuration.Record(ctx, e.Elapsed.Seconds(), attrs)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Restarted counts an actor restarted by its supervisor ("session", "mcp").
func (t *Telemetry) Restarted(ctx context.Context, supervisor string) {
	if t.Metering() {
		t.m.restarts.Add(ctx, 1, metric.WithAttributes(KeySupervisor.String(supervisor)))
	}
}

// ObserveSessions reports the number active returns as the active
// sessions gauge at each collection, until unregister is called. Without a
// MeterProvider it does nothing.
func (t *Telemetry) ObserveSessions(active func() int) (unregister func() error, err error) {
	if !t.Metering() {
		return func() error { return nil }, nil
	}
	reg, err := t.m.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(t.m.sessions, int64(active()))
		return nil
	}, t.m.sessions)
	if err != nil {
		return nil, fmt.Errorf("telemetry: active sessions gauge: %w", err)
	}
	return reg.Unregister, nil
}
