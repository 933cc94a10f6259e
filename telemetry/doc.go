// Package telemetry is agcore's OpenTelemetry seam: the spans and metrics of
// a turn, recorded at its boundaries (the turn, each model call, each tool
// call, approval waits and compactions) through the TracerProvider and
// MeterProvider a program gives it. It sets no global provider and reads
// no environment variable; with neither provider it does nothing, and its
// methods return at once without allocating.
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
//	rt, err := actors.New(actors.Config{
//		DataDir:        dir,
//		Provider:       provider,
//		TracerProvider: tp,
//		MeterProvider:  mp,
//	})
//
// # Spans
//
// Spans follow the OpenTelemetry semantic conventions for generative AI:
//
//	invoke_agent <agent>      one per turn (gen_ai.conversation.id is the session)
//	├─ chat <model>           one per model call; retries are events on it
//	├─ execute_tool <tool>    one per tool call, in parallel when the calls are
//	│  ├─ await_approval <tool>    the wait for a human or policy decision
//	│  └─ invoke_agent <agent>     the turn of a sub-agent the call spawned
//	└─ compact_history        a compaction the turn waited for
//
// Prompts, completions, tool arguments and tool results are recorded only
// when Config.RecordContent is set, and then through Config.Redact.
//
// # Metrics
//
// Turns by outcome, model calls, tokens and cost by model, model latency,
// tool calls, errors, timeouts and latency by tool and source, active
// sessions and restarts by supervisor, under the names listed in
// MetricNames, plus the GenAI client metrics gen_ai.client.token.usage
// and gen_ai.client.operation.duration.
//
// # Journal
//
// TraceRef turns a span into the ids a journal keeps with a turn, and
// RefContext turns them back into a span context, so that a turn resumed
// after a crash links to the span of the interrupted one.
package telemetry
