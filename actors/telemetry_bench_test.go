package actors_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// discardSpans is a span exporter that drops what it is given: the
// benchmark measures recording, not exporting.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkTurnTracing runs the same turns (a tool call and two model
// calls each) through a runtime without telemetry and one that records
// every span (through the SDK, to an exporter that drops them) and every
// metric, alternating them turn by turn, and reports each one's time per
// turn and their ratio.
func BenchmarkTurnTracing(b *testing.B) {
	const turnsPerConversation = 16
	newRT := func(traced bool) *actors.Runtime {
		script := toolScript("done", scripted.ToolCall{Name: "echo", Arguments: "{}"})
		script.Stateless = true
		reg := toolsys.NewRegistry(toolsys.Config{})
		reg.MustRegister(echoTool("echo"))
		cfg := actors.Config{Provider: scripted.MustNew(script, scripted.Options{}), Tools: reg, IdleTimeout: -1, Compaction: actors.Compaction{Disabled: true}}
		if traced {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(discardSpans{})))
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
			cfg.TracerProvider, cfg.MeterProvider = tp, mp
		}
		rt, err := actors.NewInMemory(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
		return rt
	}
	off, on := newRT(false), newRT(true)
	ctx := context.Background()
	var (
		offSess, onSess *actors.Session
		offTime, onTime time.Duration
		turn            int
	)
	for b.Loop() {
		if turn%turnsPerConversation == 0 {
			var err error
			id := fmt.Sprintf("tracing-%d", turn)
			if offSess, err = off.Open(ctx, id); err != nil {
				b.Fatal(err)
			}
			if onSess, err = on.Open(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
		turn++
		// Which runs first alternates, so that neither always finds the
		// caches warm.
		order := []*actors.Session{offSess, onSess}
		if turn%2 == 0 {
			order[0], order[1] = onSess, offSess
		}
		for _, s := range order {
			start := time.Now()
			if _, err := s.Submit(ctx, messages.UserText("go")); err != nil {
				b.Fatal(err)
			}
			if s == offSess {
				offTime += time.Since(start)
			} else {
				onTime += time.Since(start)
			}
		}
	}
	b.ReportMetric(float64(offTime.Nanoseconds())/float64(b.N), "off-ns/turn")
	b.ReportMetric(float64(onTime.Nanoseconds())/float64(b.N), "on-ns/turn")
	b.ReportMetric(float64(onTime)/float64(offTime), "on/off")
}
