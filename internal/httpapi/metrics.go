package httpapi

import (
	"bufio"
	"cmp"
	"context"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/toolsys"
)

// Metrics counts what the server and the runtime do, for the /metrics
// endpoint: HTTP requests by route and status, and turns by outcome (when
// its hooks are registered with the runtime). The zero value is ready to
// use. It is safe for concurrent use.
type Metrics struct {
	mu       sync.Mutex
	requests map[requestKey]*requestStats
	turns    map[messages.TurnOutcome]int64
}

type requestKey struct {
	route string
	code  int
}

type requestStats struct {
	count   int64
	seconds float64
}

// RegisterHooks registers the hooks that count turns by outcome, on every
// session of the runtime built with h.
func (m *Metrics) RegisterHooks(h *actors.Hooks) {
	h.Register(actors.OnTurnEnd, actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
		m.countTurn(hc.Outcome)
		return actors.HookResult{}
	}))
}

func (m *Metrics) countTurn(outcome messages.TurnOutcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.turns == nil {
		m.turns = make(map[messages.TurnOutcome]int64)
	}
	m.turns[outcome]++
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

// gauges are the values read when /metrics is scraped.
type gauges struct {
	activeSessions int
	streams        int64
	inFlight       int64
	approvals      int
	tools          map[string]toolsys.Stats
	usage          providers.UsageSnapshot
}

// write writes every series in the Prometheus text exposition format
// (version 0.0.4), families and series in a stable order.
func (m *Metrics) write(w io.Writer, g gauges) error {
	m.mu.Lock()
	reqs := make(map[requestKey]requestStats, len(m.requests))
	for k, v := range m.requests {
		reqs[k] = *v
	}
	turns := maps.Clone(m.turns)
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

	p.family("agcore_turns_total", "counter", "Turns ended, by outcome.")
	for _, o := range slices.Sorted(maps.Keys(turns)) {
		p.sample("agcore_turns_total", float64(turns[o]), "outcome", string(o))
	}
	p.family("agcore_sessions_active", "gauge", "Sessions whose actor is running.")
	p.sample("agcore_sessions_active", float64(g.activeSessions))
	p.family("agcore_approvals_pending", "gauge", "Tool calls waiting for approval.")
	p.sample("agcore_approvals_pending", float64(g.approvals))

	names := slices.Sorted(maps.Keys(g.tools))
	p.family("agcore_tool_calls_total", "counter", "Tool calls dispatched, refused ones included, by tool.")
	for _, n := range names {
		p.sample("agcore_tool_calls_total", float64(g.tools[n].Calls), "tool", n)
	}
	p.family("agcore_tool_errors_total", "counter", "Tool calls that ended in an error, by tool.")
	for _, n := range names {
		p.sample("agcore_tool_errors_total", float64(g.tools[n].Errors), "tool", n)
	}
	p.family("agcore_tool_timeouts_total", "counter", "Tool calls whose deadline passed, by tool.")
	for _, n := range names {
		p.sample("agcore_tool_timeouts_total", float64(g.tools[n].Timeouts), "tool", n)
	}
	p.family("agcore_tool_latency_seconds", "summary", "Tool call latency, by tool.")
	for _, n := range names {
		p.sample("agcore_tool_latency_seconds_sum", g.tools[n].TotalLatency.Seconds(), "tool", n)
		p.sample("agcore_tool_latency_seconds_count", float64(g.tools[n].Calls), "tool", n)
	}
	p.family("agcore_tool_latency_max_seconds", "gauge", "Longest tool call, by tool.")
	for _, n := range names {
		p.sample("agcore_tool_latency_max_seconds", g.tools[n].MaxLatency.Seconds(), "tool", n)
	}

	models := slices.Sorted(maps.Keys(g.usage.Models))
	p.family("agcore_model_calls_total", "counter", "Model calls, by model.")
	for _, n := range models {
		p.sample("agcore_model_calls_total", float64(g.usage.Models[n].Calls), "model", n)
	}
	p.family("agcore_tokens_total", "counter", "Tokens used, by model and kind (prompt, completion).")
	for _, n := range models {
		u := g.usage.Models[n].Usage
		p.sample("agcore_tokens_total", float64(u.PromptTokens), "model", n, "kind", "prompt")
		p.sample("agcore_tokens_total", float64(u.CompletionTokens), "model", n, "kind", "completion")
	}
	p.family("agcore_cost_total", "counter", "Cost of the model calls, by model, in the price table's currency.")
	for _, n := range models {
		p.sample("agcore_cost_total", g.usage.Models[n].Cost, "model", n)
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
