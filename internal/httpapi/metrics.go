package httpapi

import (
	"bufio"
	"cmp"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Metrics counts what the server does, for the /metrics endpoint: HTTP
// requests by route and status. The runtime's own series come from
// Config.MetricsReader. The zero value is ready to use. It is safe for
// concurrent use.
type Metrics struct {
	mu       sync.Mutex
	requests map[requestKey]*requestStats
}

type requestKey struct {
	route string
	code  int
}

type requestStats struct {
	count   int64
	seconds float64
}

func (m *Metrics) observeRequest(route string, code int, took time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.requests == nil {
		m.requests = make(map[requestKey]*requestStats)
	}
	k := requestKey{route, code}
	s := m.requests[k]
	if s == nil {
		s = &requestStats{}
		m.requests[k] = s
	}
	s.count++
	s.seconds += took.Seconds()
}

// gauges are the server's values read when /metrics is scraped.
type gauges struct {
	streams   int64
	inFlight  int64
	approvals int
}

// write writes every series in the Prometheus text exposition format
// (version 0.0.4), families and series in a stable order.
func (m *Metrics) write(w io.Writer, g gauges, runtime *metricdata.ResourceMetrics) error {
	m.mu.Lock()
	reqs := make(map[requestKey]requestStats, len(m.requests))
	for k, v := range m.requests {
		reqs[k] = *v
	}
	m.mu.Unlock()

	p := &promWriter{w: bufio.NewWriter(w)}

	reqKeys := slices.SortedFunc(maps.Keys(reqs), func(a, b requestKey) int {
		return cmp.Or(cmp.Compare(a.route, b.route), cmp.Compare(a.code, b.code))
	})
	p.family("agcore_http_requests_total", "counter", "HTTP requests answered, by route pattern and status code.")
	for _, k := range reqKeys {
		p.sample("agcore_http_requests_total", float64(reqs[k].count), "route", k.route, "code", strconv.Itoa(k.code))
	}
	p.family("agcore_http_request_duration_seconds", "summary", "Time spent answering HTTP requests, by route pattern and status code (SSE streams included).")
	for _, k := range reqKeys {
		p.sample("agcore_http_request_duration_seconds_sum", reqs[k].seconds, "route", k.route, "code", strconv.Itoa(k.code))
		p.sample("agcore_http_request_duration_seconds_count", float64(reqs[k].count), "route", k.route, "code", strconv.Itoa(k.code))
	}
	p.family("agcore_http_requests_in_flight", "gauge", "HTTP requests being answered.")
	p.sample("agcore_http_requests_in_flight", float64(g.inFlight))
	p.family("agcore_sse_streams", "gauge", "Server-Sent Event streams open.")
	p.sample("agcore_sse_streams", float64(g.streams))

	p.family("agcore_approvals_pending", "gauge", "Tool calls waiting for approval.")
	p.sample("agcore_approvals_pending", float64(g.approvals))
	if runtime != nil {
		writeOTel(p, runtime)
	}
	return p.flush()
}

// promWriter writes the Prometheus text format.
type promWriter struct {
	w   *bufio.Writer
	err error
}

func (p *promWriter) family(name, typ, help string) {
	p.write("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
}

// sample writes one series; labels alternate names and values.
func (p *promWriter) sample(name string, v float64, labels ...string) {
	var sb strings.Builder
	sb.WriteString(name)
	if len(labels) > 0 {
		sb.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(labels[i])
			sb.WriteString(`="`)
			sb.WriteString(escapeLabel(labels[i+1]))
			sb.WriteByte('"')
		}
		sb.WriteByte('}')
	}
	sb.WriteByte(' ')
	sb.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	sb.WriteByte('\n')
	p.write(sb.String())
}

func (p *promWriter) write(s string) {
	if p.err == nil {
		_, p.err = p.w.WriteString(s)
	}
}

func (p *promWriter) flush() error {
	if p.err != nil {
		return p.err
	}
	return p.w.Flush()
}

// labelEscaper escapes a label value: backslash, double quote and newline.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
