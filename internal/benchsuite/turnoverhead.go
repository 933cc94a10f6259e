package benchsuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/openai"
	"github.com/agcore/agcore/providers/scripted"
)

// TurnOverheadConfig sizes the turn-overhead workload. Zero fields take
// the defaults of the full run (quick-run defaults in parentheses).
type TurnOverheadConfig struct {
	// Pairs is the number of measured pairs of turns. Zero means 600 (150).
	Pairs int
	// WarmUp is the number of pairs run and discarded first. Zero means 50
	// (20).
	WarmUp int
	// TurnsPerConversation is how many turns a conversation (a session on
	// one side, a message history on the other) runs before a new one
	// starts, so that the history does not grow with Pairs. Zero means 16.
	TurnsPerConversation int
}

func (c TurnOverheadConfig) withDefaults(quick bool) TurnOverheadConfig {
	c.Pairs = orDefault(c.Pairs, 600, 150, quick)
	c.WarmUp = orDefault(c.WarmUp, 50, 20, quick)
	c.TurnsPerConversation = orDefault(c.TurnsPerConversation, 16, 16, quick)
	return c
}

// TurnOverheadResult compares a turn through the runtime with the same turn
// made by a bare go-openai loop. Times and CPU are medians per turn;
// allocations are means per turn. CPU and allocations are those of the
// whole process, mock server included, which both sides share.
type TurnOverheadResult struct {
	// Pairs is the number of measured pairs of turns.
	Pairs int `json:"pairs"`
	// RequestsPerTurn is the number of chat requests of a turn (2).
	RequestsPerTurn int `json:"requests_per_turn"`

	// RuntimeWallMicros and BareWallMicros are the median wall times.
	RuntimeWallMicros float64 `json:"runtime_wall_us"`
	BareWallMicros    float64 `json:"bare_wall_us"`
	// WallRatio is the median of the per-pair ratios runtime/bare.
	WallRatio float64 `json:"wall_ratio"`

	// RuntimeCPUMicros and BareCPUMicros are the median CPU times (user
	// and system, every thread of the process).
	RuntimeCPUMicros float64 `json:"runtime_cpu_us"`
	BareCPUMicros    float64 `json:"bare_cpu_us"`
	// CPURatio is the median of the per-pair ratios runtime/bare.
	CPURatio float64 `json:"cpu_ratio"`

	// RuntimeAllocs and BareAllocs are the mean heap allocations.
	RuntimeAllocs float64 `json:"runtime_allocs"`
	BareAllocs    float64 `json:"bare_allocs"`
	// AllocRatio is RuntimeAllocs over BareAllocs.
	AllocRatio float64 `json:"alloc_ratio"`
	// RuntimeBytes and BareBytes are the mean heap bytes allocated.
	RuntimeBytes float64 `json:"runtime_bytes"`
	BareBytes    float64 `json:"bare_bytes"`
}

// TurnOverhead measures the cost of a turn through the runtime against a
// bare loop. One scripted model behind one mockllm server on 127.0.0.1
// answers both; each turn is two streamed chat requests with one lookup
// tool call between them. The runtime side submits to a session of
// actors.NewInMemory with the openai provider; the bare side drives
// go-openai itself, assembles the streamed tool call, decodes the arguments
// and calls the same tool. Both keep the conversation history across
// turns and share one http.Client. The two sides alternate, each going
// first in every other pair.
func TurnOverhead(ctx context.Context, cfg TurnOverheadConfig) (*TurnOverheadResult, error) {
	cfg = cfg.withDefaults(false)
	model, err := scripted.New(lookupScript(), scripted.Options{ChunkSize: 16})
	if err != nil {
		return nil, err
	}
	srv, err := mockllm.Start(ctx, "127.0.0.1:0", mockllm.Config{Provider: model})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	hc, closeIdle := httpClient()
	defer closeIdle()

	prov, err := openai.New(openai.Options{BaseURL: srv.URL(), Model: scripted.DefaultModel, HTTPClient: hc,
		Retry: &providers.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		return nil, err
	}
	tools := lookupTools()
	rt, err := actors.NewInMemory(actors.Config{Provider: prov, Tools: tools, IdleTimeout: -1,
		Compaction: actors.Compaction{Disabled: true}})
	if err != nil {
		return nil, err
	}
	defer func() { _ = rt.Shutdown(context.WithoutCancel(ctx)) }()

	bare := newBareLoop(srv.URL(), hc, tools.Definitions())
	var sess *actors.Session
	runtimeTurn := func() error {
		res, err := sess.Submit(ctx, messages.UserText("What is the value of alpha?"))
		if err != nil {
			return err
		}
		return checkTurn(res, 1)
	}
	bareTurn := func() error { return bare.turn(ctx, "What is the value of alpha?") }

	var pairs pairStats
	total := cfg.WarmUp + cfg.Pairs
	for i := range total {
		if i%cfg.TurnsPerConversation == 0 {
			if sess, err = rt.Open(ctx, fmt.Sprintf("overhead-%d", i)); err != nil {
				return nil, err
			}
			bare.reset()
		}
		a, b, err := alternate(i, runtimeTurn, bareTurn)
		if err != nil {
			return nil, err
		}
		if i >= cfg.WarmUp {
			pairs.add(a, b)
		}
	}
	res := &TurnOverheadResult{Pairs: cfg.Pairs, RequestsPerTurn: 2}
	res.RuntimeWallMicros, res.BareWallMicros, res.WallRatio = pairs.wall()
	res.RuntimeCPUMicros, res.BareCPUMicros, res.CPURatio = pairs.cpu()
	res.RuntimeAllocs, res.BareAllocs, res.RuntimeBytes, res.BareBytes = pairs.allocs()
	res.AllocRatio = ratio(res.RuntimeAllocs, res.BareAllocs)
	return res, nil
}

// Table lays the result out.
func (r *TurnOverheadResult) Table() Table {
	return Table{
		Title:   fmt.Sprintf("turn overhead: runtime vs bare go-openai loop (%d turn pairs, %d requests + 1 tool call per turn, mock server over HTTP)", r.Pairs, r.RequestsPerTurn),
		Columns: []string{"per turn", "runtime", "bare go-openai", "runtime/bare", "difference"},
		Rows: [][]string{
			{"wall time (median)", fmtFloat(r.RuntimeWallMicros, 0) + " µs", fmtFloat(r.BareWallMicros, 0) + " µs", fmtRatio(r.WallRatio), fmtFloat(r.RuntimeWallMicros-r.BareWallMicros, 0) + " µs"},
			{"CPU, process (median)", fmtFloat(r.RuntimeCPUMicros, 0) + " µs", fmtFloat(r.BareCPUMicros, 0) + " µs", fmtRatio(r.CPURatio), fmtFloat(r.RuntimeCPUMicros-r.BareCPUMicros, 0) + " µs"},
			{"allocations (mean)", fmtFloat(r.RuntimeAllocs, 0), fmtFloat(r.BareAllocs, 0), fmtRatio(r.AllocRatio), fmtFloat(r.RuntimeAllocs-r.BareAllocs, 0)},
			{"allocated bytes (mean)", fmtKiB(r.RuntimeBytes), fmtKiB(r.BareBytes), fmtRatio(ratio(r.RuntimeBytes, r.BareBytes)), fmtKiB(r.RuntimeBytes - r.BareBytes)},
		},
		Notes: []string{
			"CPU and allocations are the whole process's, so both sides include the mock server's share;",
			"the difference column is the runtime's own cost per turn (actors, journal, events, tool registry).",
		},
	}
}

// alternate runs a and b once each, a first when i is even and b first
// otherwise, and returns what each cost.
func alternate(i int, a, b func() error) (da, db delta, err error) {
	s := newSampler()
	run := func(f func() error) (delta, error) {
		start := s.take()
		err := f()
		return start.to(s.take()), err
	}
	if i%2 == 0 {
		if da, err = run(a); err == nil {
			db, err = run(b)
		}
	} else {
		if db, err = run(b); err == nil {
			da, err = run(a)
		}
	}
	return da, db, err
}

// pairStats accumulates the costs of alternated pairs: a is the subject, b
// the baseline.
type pairStats struct {
	a, b []delta
}

func (p *pairStats) add(a, b delta) {
	p.a = append(p.a, a)
	p.b = append(p.b, b)
}

// wall returns the median wall time of each side in µs and the median of
// the pairwise ratios.
func (p *pairStats) wall() (a, b, r float64) {
	return p.medians(func(d delta) float64 { return micros(d.wall) })
}

// cpu is wall for CPU time.
func (p *pairStats) cpu() (a, b, r float64) {
	return p.medians(func(d delta) float64 { return micros(d.cpu) })
}

func (p *pairStats) medians(f func(delta) float64) (a, b, r float64) {
	as, bs, rs := make([]float64, len(p.a)), make([]float64, len(p.b)), make([]float64, 0, len(p.a))
	for i := range p.a {
		as[i], bs[i] = f(p.a[i]), f(p.b[i])
		if bs[i] > 0 {
			rs = append(rs, as[i]/bs[i])
		}
	}
	return median(as), median(bs), median(rs)
}

// allocs returns the mean allocations and allocated bytes of each side.
// Allocation counters are flushed lazily by the Go runtime, so single
// readings are noisy but the sums are exact.
func (p *pairStats) allocs() (aN, bN, aBytes, bBytes float64) {
	var sa, sb, ba, bb uint64
	for i := range p.a {
		sa, ba = sa+p.a[i].allocs, ba+p.a[i].bytes
		sb, bb = sb+p.b[i].allocs, bb+p.b[i].bytes
	}
	n := float64(max(len(p.a), 1))
	return float64(sa) / n, float64(sb) / n, float64(ba) / n, float64(bb) / n
}

// bareLoop is the baseline agent loop: go-openai streaming chat requests
// and the tool called directly.
type bareLoop struct {
	client  *oai.Client
	tools   []oai.Tool
	history []oai.ChatCompletionMessage
	lookup  lookupTool
}

func newBareLoop(baseURL string, hc oai.HTTPDoer, defs []messages.ToolDefinition) *bareLoop {
	cfg := oai.DefaultConfig("")
	cfg.BaseURL = baseURL
	cfg.HTTPClient = hc
	l := &bareLoop{client: oai.NewClientWithConfig(cfg)}
	for _, d := range defs {
		l.tools = append(l.tools, oai.Tool{Type: oai.ToolTypeFunction, Function: &oai.FunctionDefinition{
			Name: d.Name, Description: d.Description, Parameters: json.RawMessage(d.Parameters),
		}})
	}
	return l
}

func (l *bareLoop) reset() { l.history = l.history[:0] }

// turn sends text and loops until the model stops calling tools.
func (l *bareLoop) turn(ctx context.Context, text string) error {
	l.history = append(l.history, oai.ChatCompletionMessage{Role: oai.ChatMessageRoleUser, Content: text})
	for range 10 {
		msg, err := l.stream(ctx)
		if err != nil {
			return err
		}
		l.history = append(l.history, msg)
		if len(msg.ToolCalls) == 0 {
			return nil
		}
		for _, c := range msg.ToolCalls {
			var p lookupParams
			if err := json.Unmarshal([]byte(c.Function.Arguments), &p); err != nil {
				return fmt.Errorf("%w: bare loop: arguments of %s: %w", ErrUnexpected, c.Function.Name, err)
			}
			res, err := l.lookup.Execute(ctx, p, nil)
			if err != nil {
				return err
			}
			l.history = append(l.history, oai.ChatCompletionMessage{Role: oai.ChatMessageRoleTool, Content: res.Content, ToolCallID: c.ID})
		}
	}
	return fmt.Errorf("%w: bare loop: too many round trips", ErrUnexpected)
}

// stream makes one streamed request and assembles the reply.
func (l *bareLoop) stream(ctx context.Context) (oai.ChatCompletionMessage, error) {
	msg := oai.ChatCompletionMessage{Role: oai.ChatMessageRoleAssistant}
	st, err := l.client.CreateChatCompletionStream(ctx, oai.ChatCompletionRequest{
		Model: scripted.DefaultModel, Messages: l.history, Tools: l.tools,
		Stream: true, StreamOptions: &oai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		return msg, err
	}
	defer st.Close()
	var text strings.Builder
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return msg, err
		}
		for _, ch := range ev.Choices {
			text.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				i := len(msg.ToolCalls) - 1
				if tc.Index != nil {
					i = *tc.Index
				}
				for len(msg.ToolCalls) <= i {
					msg.ToolCalls = append(msg.ToolCalls, oai.ToolCall{Type: oai.ToolTypeFunction})
				}
				c := &msg.ToolCalls[i]
				if tc.ID != "" {
					c.ID = tc.ID
				}
				c.Function.Name += tc.Function.Name
				c.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	msg.Content = text.String()
	return msg, nil
}
