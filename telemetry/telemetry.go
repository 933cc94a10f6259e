package telemetry

import (
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of agcore's tracer and meter.
const ScopeName = "github.com/agcore/agcore"

// Config configures a Telemetry. The zero value records nothing.
type Config struct {
	// TracerProvider receives the spans. Nil means no spans: the tracing
	// calls return at once, without allocating.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the metrics. Nil means no metrics.
	MeterProvider metric.MeterProvider
	// RecordContent records prompts, completions, tool arguments and tool
	// results on the spans, each passed through Redact first. False (the
	// default) records sizes and names only.
	RecordContent bool
	// Redact masks credentials in recorded content. Nil with
	// RecordContent set is a configuration error: content is never
	// recorded unredacted.
	Redact func(string) string
}

// Telemetry records the spans and metrics of turns. A nil *Telemetry is
// valid and records nothing. It is safe for concurrent use.
type Telemetry struct {
	tracer  trace.Tracer
	content bool
	redact  func(string) string
	m       *instruments
}

// New returns a Telemetry for cfg. It fails when RecordContent is set
// without Redact, or when the meter refuses an instrument.
func New(cfg Config) (*Telemetry, error) {
	if cfg.RecordContent && cfg.Redact == nil {
		return nil, fmt.Errorf("telemetry: RecordContent needs Redact, so that no content is recorded unredacted")
	}
	t := &Telemetry{content: cfg.RecordContent, redact: cfg.Redact}
	if cfg.TracerProvider != nil {
		t.tracer = cfg.TracerProvider.Tracer(ScopeName)
	}
	if cfg.MeterProvider != nil {
		m, err := newInstruments(cfg.MeterProvider.Meter(ScopeName))
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		t.m = m
	}
	return t, nil
}

// Tracing reports whether spans are recorded.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracer != nil }

// Metering reports whether metrics are recorded.
func (t *Telemetry) Metering() bool { return t != nil && t.m != nil }

// text returns s as content may be recorded: redacted.
func (t *Telemetry) text(s string) string { return t.redact(s) }
