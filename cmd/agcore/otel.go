package main

// This file sets up OpenTelemetry for the CLI from the standard OTEL_*
// environment variables: OTLP exporters over HTTP or gRPC for traces and
// metrics, and, for serve, the reader that /metrics shows.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"

	"github.com/agcore/agcore/actors"
)

// The OpenTelemetry environment variables the CLI reads. The exporters
// also read the rest of the OTLP variables themselves (headers, timeout,
// compression, certificates), and the SDK reads OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and
// OTEL_METRIC_EXPORT_INTERVAL.
const (
	envOTelDisabled        = "OTEL_SDK_DISABLED"
	envOTelTracesExporter  = "OTEL_TRACES_EXPORTER"
	envOTelMetricsExporter = "OTEL_METRICS_EXPORTER"
	envOTLPEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envOTLPProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	// envCaptureContent opts in to prompts, completions and tool data on
	// the spans (masked by the redactor), as the GenAI instrumentations
	// of OpenTelemetry name it.
	envCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
)

// otelShutdownTimeout bounds the flush of the exporters at exit.
const otelShutdownTimeout = 5 * time.Second

// errOTelEnv is wrapped by every error in the OpenTelemetry variables.
var errOTelEnv = errors.New("OpenTelemetry environment")

// otelSetup holds the providers the CLI gives the runtime.
type otelSetup struct {
	tp      *sdktrace.TracerProvider // nil: no spans
	mp      *sdkmetric.MeterProvider // nil: no metrics
	reader  *sdkmetric.ManualReader  // what /metrics reads; nil outside serve
	content bool
}

// signalEnv returns the variable of one signal: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// for ("OTEL_EXPORTER_OTLP_ENDPOINT", "TRACES").
func signalEnv(general, signal string) string {
	return strings.Replace(general, "OTLP_", "OTLP_"+signal+"_", 1)
}

// otlpTarget is where one signal is exported: protocol and endpoint URL
// ("" for the exporter's default).
type otlpTarget struct {
	protocol string
	endpoint string
}

// target decides whether a signal ("TRACES", "METRICS") is exported, and
// where: OTEL_<SIGNAL>_EXPORTER "none" turns it off, "otlp" on, and unset
// it is on when an OTLP endpoint is set, so that nothing is exported when
// nothing is configured.
func (a *app) target(signal, exporterVar string) (*otlpTarget, error) {
	exporter := strings.TrimSpace(a.getenv(exporterVar))
	generic, specific := a.getenv(envOTLPEndpoint), a.getenv(signalEnv(envOTLPEndpoint, signal))
	switch exporter {
	case "none":
		return nil, nil
	case "":
		if generic == "" && specific == "" {
			return nil, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("%w: %s=%q: agcore exports \"otlp\" or \"none\"", errOTelEnv, exporterVar, exporter)
	}
	t := &otlpTarget{protocol: a.getenv(signalEnv(envOTLPProtocol, signal))}
	if t.protocol == "" {
		t.protocol = a.getenv(envOTLPProtocol)
	}
	switch t.protocol {
	case "":
		t.protocol = "http/protobuf"
	case "http/protobuf", "grpc":
	default:
		return nil, fmt.Errorf("%w: %s=%q: use \"http/protobuf\" or \"grpc\"", errOTelEnv, envOTLPProtocol, t.protocol)
	}
	switch {
	case specific != "":
		t.endpoint = specific
	case generic != "" && t.protocol == "grpc":
		t.endpoint = generic
	case generic != "":
		t.endpoint = strings.TrimSuffix(generic, "/") + "/v1/" + strings.ToLower(signal)
	}
	if t.endpoint != "" && !strings.Contains(t.endpoint, "://") {
		return nil, fmt.Errorf("%w: OTLP endpoint %q needs a scheme (http:// or https://)", errOTelEnv, t.endpoint)
	}
	return t, nil
}

// setupOTel builds the providers the OTEL_* variables ask for. With
// metricsReader (serve), metrics are always recorded, for /metrics, and
// exported as well when the variables say so.
func (a *app) setupOTel(ctx context.Context, metricsReader bool) (*otelSetup, error) {
	s := &otelSetup{content: a.getenv(envCaptureContent) == "true"}
	if strings.EqualFold(a.getenv(envOTelDisabled), "true") {
		if metricsReader {
			s.reader = sdkmetric.NewManualReader()
			s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
		}
		return s, nil
	}
	traces, err := a.target("TRACES", envOTelTracesExporter)
	if err != nil {
		return nil, &usageError{err}
	}
	metrics, err := a.target("METRICS", envOTelMetricsExporter)
	if err != nil {
		return nil, &usageError{err}
	}
	if traces == nil && metrics == nil && !metricsReader {
		return s, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("agcore"), semconv.ServiceVersion(moduleVersion())),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("%w: resource: %w", errOTelEnv, err)
	}
	if traces != nil {
		exp, err := traceExporter(ctx, traces)
		if err != nil {
			return nil, err
		}
		s.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}
	opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if metrics != nil {
		exp, err := metricExporter(ctx, metrics)
		if err != nil {
			_ = s.shutdown(ctx)
			return nil, err
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	if metricsReader {
		s.reader = sdkmetric.NewManualReader()
		opts = append(opts, sdkmetric.WithReader(s.reader))
	}
	if metrics != nil || metricsReader {
		s.mp = sdkmetric.NewMeterProvider(opts...)
	}
	return s, nil
}

func traceExporter(ctx context.Context, t *otlpTarget) (sdktrace.SpanExporter, error) {
	var (
		exp sdktrace.SpanExporter
		err error
	)
	if t.protocol == "grpc" {
		var opts []otlptracegrpc.Option
		if t.endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(t.endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	} else {
		var opts []otlptracehttp.Option
		if t.endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(t.endpoint))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: trace exporter (%s %s): %w", errOTelEnv, t.protocol, t.endpoint, err)
	}
	return exp, nil
}

func metricExporter(ctx context.Context, t *otlpTarget) (sdkmetric.Exporter, error) {
	var (
		exp sdkmetric.Exporter
		err error
	)
	if t.protocol == "grpc" {
		var opts []otlpmetricgrpc.Option
		if t.endpoint != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(t.endpoint))
		}
		exp, err = otlpmetricgrpc.New(ctx, opts...)
	} else {
		var opts []otlpmetrichttp.Option
		if t.endpoint != "" {
			opts = append(opts, otlpmetrichttp.WithEndpointURL(t.endpoint))
		}
		exp, err = otlpmetrichttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: metric exporter (%s %s): %w", errOTelEnv, t.protocol, t.endpoint, err)
	}
	return exp, nil
}

// apply gives the providers to the runtime.
func (s *otelSetup) apply(rc *actors.Config) {
	if s.tp != nil {
		rc.TracerProvider = s.tp
	}
	if s.mp != nil {
		rc.MeterProvider = s.mp
	}
	rc.TraceContent = s.content
}

// close flushes and stops the providers, bounded by otelShutdownTimeout.
// A collector that cannot be reached does not fail the command: close
// logs the error.
func (s *otelSetup) close(ctx context.Context, log zerolog.Logger) {
	if err := s.shutdown(ctx); err != nil {
		log.Warn().Err(err).Msg("telemetry not delivered")
	}
}

// shutdown flushes and stops the providers, bounded by
// otelShutdownTimeout.
func (s *otelSetup) shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), otelShutdownTimeout)
	defer cancel()
	var errs []error
	if s.tp != nil {
		errs = append(errs, s.tp.Shutdown(ctx))
	}
	if s.mp != nil {
		errs = append(errs, s.mp.Shutdown(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("OpenTelemetry flush: %w", err)
	}
	return nil
}

// moduleVersion is the module version agcore was built from.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
