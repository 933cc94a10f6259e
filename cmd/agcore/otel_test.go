package main

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an in-process OTLP/HTTP trace receiver: it decodes each
// export request and keeps its spans.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []string
	paths   []string
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body := io.Reader(req.Body)
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths = append(r.paths, req.URL.Path)
	var out []byte
	switch req.URL.Path {
	case "/v1/traces":
		var msg collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range msg.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		out, _ = proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	case "/v1/metrics":
		var msg collectormetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(b, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rm := range msg.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					r.metrics = append(r.metrics, m.Name)
				}
			}
		}
		out, _ = proto.Marshal(&collectormetrics.ExportMetricsServiceResponse{})
	default:
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// TestRun_ExportsOTLPHTTP runs a turn with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at an in-process receiver, decodes what arrived (the turn's
// invoke_agent span, its chat and execute_tool children), and finds the
// turn's trace id in `agcore sessions replay`.
func TestRun_ExportsOTLPHTTP(t *testing.T) {
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	url := startMockLLM(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "agcore.yaml")
	if err := os.WriteFile(cfgPath, []byte("workspace: "+t.TempDir()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_BASE_URL": url, "OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "XDG_CONFIG_HOME": t.TempDir()}
	code, stdout, stderr := runCLI(t.Context(), t, env, "--config", cfgPath, "--data-dir", dir, "run", "--model", "scripted", "--session", "traced", "--permission-mode", "bypass", "Summarise the project")
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	recv.mu.Lock()
	spans, paths, metrics := recv.spans, recv.paths, recv.metrics
	recv.mu.Unlock()
	if !slices.Contains(paths, "/v1/traces") || !slices.Contains(paths, "/v1/metrics") {
		t.Fatalf("export requests to %q, want /v1/traces and /v1/metrics", paths)
	}
	if !slices.Contains(metrics, "agcore.turns") || !slices.Contains(metrics, "gen_ai.client.token.usage") {
		t.Errorf("metrics exported: %q", metrics)
	}
	var root *tracepb.Span
	kinds := map[string]int{}
	for _, s := range spans {
		op := strings.SplitN(s.Name, " ", 2)[0]
		kinds[op]++
		if op == "invoke_agent" {
			root = s
		}
	}
	if root == nil || kinds["chat"] < 2 || kinds["execute_tool"] < 1 {
		t.Fatalf("spans by operation %v", kinds)
	}
	for _, s := range spans {
		if s != root && string(s.ParentSpanId) != string(root.SpanId) {
			t.Errorf("span %q is not a child of the turn", s.Name)
		}
	}
	attrs := map[string]string{}
	for _, kv := range root.Attributes {
		attrs[kv.Key] = kv.Value.GetStringValue()
	}
	if attrs["gen_ai.conversation.id"] != "traced" || attrs["agcore.turn.outcome"] != "completed" {
		t.Errorf("turn span attributes %v", attrs)
	}
	code, stdout, stderr = runCLI(t.Context(), t, env, "--data-dir", dir, "sessions", "replay", "traced")
	traceID := hexID(root.TraceId)
	if code != exitOK || !strings.Contains(stdout, "trace "+traceID+" span "+hexID(root.SpanId)) {
		t.Errorf("replay lacks trace %s: exit %d\n%s\n%s", traceID, code, stdout, stderr)
	}
}

func hexID(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

// TestSetupOTel_Env checks which variables turn exporting on, and that
// a bad value names its variable.
func TestSetupOTel_Env(t *testing.T) {
	tests := []struct {
		name         string
		env          map[string]string
		traces, meta bool
		wantErr      string
	}{
		{"nothing configured exports nothing", nil, false, false, ""},
		{"an endpoint turns both on", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, true, ""},
		{"a traces endpoint turns traces on", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, false, ""},
		{"none turns a signal off", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_METRICS_EXPORTER": "none"}, true, false, ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, true, ""},
		{"disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, false, false, ""},
		{"unknown exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, false, `OTEL_TRACES_EXPORTER="zipkin"`},
		{"unknown protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, false, `OTEL_EXPORTER_OTLP_PROTOCOL="http/json"`},
		{"endpoint without scheme", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, false, false, "needs a scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &app{getenv: testEnv(t, tt.env)}
			s, err := a.setupOTel(t.Context(), false)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, errOTelEnv) || !strings.Contains(err.Error(), tt.wantErr) || exitCode(err) != exitUsage {
					t.Fatalf("err = %v (exit %d), want one naming %s (exit %d)", err, exitCode(err), tt.wantErr, exitUsage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.shutdown(t.Context())
			if (s.tp != nil) != tt.traces || (s.mp != nil) != tt.meta {
				t.Errorf("traces %v metrics %v, want %v %v", s.tp != nil, s.mp != nil, tt.traces, tt.meta)
			}
		})
	}
}

// TestDemo_ExportsOTLPHTTP checks that demo, which runs its own in-memory
// runtime, exports the spans of its turns too.
func TestDemo_ExportsOTLPHTTP(t *testing.T) {
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	url := startMockLLM(t)
	env := map[string]string{"OPENAI_BASE_URL": url, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/v1/traces"}
	code, stdout, stderr := runCLI(t.Context(), t, env, "demo", "--model", "scripted", "--sessions", "2", "--workspace", t.TempDir())
	if code != exitOK {
		t.Fatalf("demo: exit %d\n%s\n%s", code, stdout, stderr)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	turns := map[string]bool{}
	for _, s := range recv.spans {
		if strings.HasPrefix(s.Name, "invoke_agent ") {
			for _, kv := range s.Attributes {
				if kv.Key == "gen_ai.conversation.id" {
					turns[kv.Value.GetStringValue()] = true
				}
			}
		}
	}
	if len(turns) != 2 || slices.Contains(recv.paths, "/v1/metrics") {
		t.Errorf("turn spans of sessions %v (want 2), export paths %q (want traces only)", turns, recv.paths)
	}
}

// TestSetupOTel_ServeAlwaysMeters: serve records metrics for /metrics even
// when nothing is exported, and exports when the variables say so.
func TestSetupOTel_ServeAlwaysMeters(t *testing.T) {
	for _, env := range []map[string]string{nil, {"OTEL_SDK_DISABLED": "true"}, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}} {
		a := &app{getenv: testEnv(t, env)}
		s, err := a.setupOTel(t.Context(), true)
		if err != nil {
			t.Fatal(err)
		}
		exporting := env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "" && env["OTEL_SDK_DISABLED"] == ""
		if s.mp == nil || s.reader == nil || (s.tp != nil) != exporting {
			t.Errorf("env %v: meter %v, reader %v, tracer %v", env, s.mp != nil, s.reader != nil, s.tp != nil)
		}
		_ = s.shutdown(t.Context())
	}
}
