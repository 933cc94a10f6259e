package telemetry

import "go.opentelemetry.io/otel/trace"

// Ref returns the ids a journal keeps of span: its trace and span ids in
// hex, both "" when the span is not recorded.
func Ref(span trace.Span) (traceID, spanID string) {
	sc := span.SpanContext()
	if !sc.IsValid() {
		return "", ""
	}
	return sc.TraceID().String(), sc.SpanID().String()
}

// RefContext returns the span context the ids of Ref name, for a link to
// it; the zero SpanContext when they are empty or malformed.
func RefContext(traceID, spanID string) trace.SpanContext {
	if traceID == "" || spanID == "" {
		return trace.SpanContext{}
	}
	tid, err := trace.TraceIDFromHex(traceID)
	if err != nil {
		return trace.SpanContext{}
	}
	sid, err := trace.SpanIDFromHex(spanID)
	if err != nil {
		return trace.SpanContext{}
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
}
