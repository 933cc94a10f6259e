package telemetry_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/telemetry"
)

// turnBoundaries makes every call a turn with one model call, one tool
// call and one approval makes.
func turnBoundaries(ctx context.Context, tel *telemetry.Telemetry) {
	ctx, turn := tel.StartTurn(ctx, telemetry.TurnStart{Session: "s1", Agent: "default", TurnID: "t1"})
	_, chat := tel.StartChat(ctx, telemetry.ChatStart{Provider: "openai", Model: "gpt"})
	tel.ChatRetry(chat, 1, context.DeadlineExceeded, time.Second)
	tel.EndChat(ctx, chat, telemetry.ChatEnd{Provider: "openai", Model: "gpt", ResponseModel: "gpt", Usage: messages.Usage{PromptTokens: 3}})
	tctx, tool := tel.StartTool(ctx, telemetry.ToolStart{Name: "read_file", CallID: "c1", Source: "builtin"})
	_, wait := tel.StartApproval(tctx, "read_file", "c1")
	tel.EndApproval(tctx, wait, true, "", nil)
	tel.EndTool(ctx, tool, telemetry.ToolEnd{Name: "read_file", Source: "builtin"})
	telemetry.Ref(turn)
	tel.EndTurn(ctx, turn, telemetry.TurnEnd{Outcome: messages.OutcomeCompleted})
}

// TestTelemetryOff_NoAllocs checks that the seam costs no allocation when
// neither provider is configured, and with a nil *Telemetry.
func TestTelemetryOff_NoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	off, err := telemetry.New(telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, tel := range map[string]*telemetry.Telemetry{"zero config": off, "nil": nil} {
		if n := testing.AllocsPerRun(100, func() { turnBoundaries(ctx, tel) }); n != 0 {
			t.Errorf("%s: %v allocations per turn, want 0", name, n)
		}
	}
}

// TestTelemetryOn_Records is the counterpart: the same calls with an SDK
// provider record the spans, under one trace.
func TestTelemetryOn_Records(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	turnBoundaries(context.Background(), tel)
	spans := exp.GetSpans()
	want := map[string]bool{"invoke_agent default": true, "chat gpt": true, "execute_tool read_file": true, "await_approval read_file": true}
	for _, s := range spans {
		if !want[s.Name] {
			t.Errorf("unexpected span %q", s.Name)
		}
		delete(want, s.Name)
		if s.SpanContext.TraceID() != spans[0].SpanContext.TraceID() {
			t.Errorf("span %q in trace %s, want one trace", s.Name, s.SpanContext.TraceID())
		}
	}
	if len(want) != 0 {
		t.Errorf("spans missing: %v", want)
	}
}

func TestNew_ContentNeedsRedact(t *testing.T) {
	_, err := telemetry.New(telemetry.Config{RecordContent: true})
	if err == nil {
		t.Fatal("RecordContent without Redact accepted")
	}
	if _, err := telemetry.New(telemetry.Config{RecordContent: true, Redact: func(s string) string { return s }}); err != nil {
		t.Fatal(err)
	}
}

func TestRef_RoundTrip(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(telemetry.Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tel.StartTurn(context.Background(), telemetry.TurnStart{Agent: "a"})
	traceID, spanID := telemetry.Ref(span)
	sc := telemetry.RefContext(traceID, spanID)
	if sc.TraceID() != span.SpanContext().TraceID() || sc.SpanID() != span.SpanContext().SpanID() {
		t.Errorf("RefContext(%s, %s) = %v, want %v", traceID, spanID, sc, span.SpanContext())
	}
	off, _ := telemetry.New(telemetry.Config{})
	_, none := off.StartTurn(context.Background(), telemetry.TurnStart{})
	if a, b := telemetry.Ref(none); a != "" || b != "" {
		t.Errorf("Ref of an unrecorded span = %q, %q", a, b)
	}
	for _, bad := range [][2]string{{"", ""}, {"zz", "b7ad6b7169203331"}, {traceID, "short"}, {"00000000000000000000000000000000", "0000000000000000"}} {
		if sc := telemetry.RefContext(bad[0], bad[1]); sc.IsValid() {
			t.Errorf("RefContext(%q, %q) is valid", bad[0], bad[1])
		}
	}
}

// FuzzRefContext feeds journaled ids, which a damaged or hand-written
// journal may hold, to RefContext: it never panics, and what it accepts
// prints back to the same ids.
func FuzzRefContext(f *testing.F) {
	f.Add("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
	f.Add("", "")
	f.Add("0AF7651916CD43DD8448EB211C80319C", "B7AD6B7169203331")
	f.Add("0af7651916cd43dd8448eb211c80319c0", "b7ad6b716920333")
	f.Fuzz(func(t *testing.T, traceID, spanID string) {
		sc := telemetry.RefContext(traceID, spanID)
		if !sc.IsValid() {
			return
		}
		if sc.TraceID().String() != traceID || sc.SpanID().String() != spanID {
			t.Errorf("RefContext(%q, %q) = %s/%s", traceID, spanID, sc.TraceID(), sc.SpanID())
		}
	})
}

// BenchmarkSeam times the calls of one turn's boundaries, off and on.
func BenchmarkSeam(b *testing.B) {
	off, _ := telemetry.New(telemetry.Config{})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	on, _ := telemetry.New(telemetry.Config{TracerProvider: tp, MeterProvider: mp})
	for name, tel := range map[string]*telemetry.Telemetry{"off": off, "on": on} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				turnBoundaries(context.Background(), tel)
			}
		})
	}
}
