package benchsuite

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// FanOutConfig sizes the fan-out workload. Zero fields take the defaults
// of the full run (quick-run defaults in parentheses).
type FanOutConfig struct {
	// Calls are the numbers of parallel tool calls per reply. Empty means
	// 1, 4, 16 and 64. The first is the baseline.
	Calls []int
	// ToolTime is how long each tool call waits. Zero means 5ms.
	ToolTime time.Duration
	// Rounds is the number of measured rounds, each running one turn of
	// every size. Zero means 40 (12).
	Rounds int
	// WarmUp is the number of rounds run and discarded first. Zero means 3.
	WarmUp int
}

func (c FanOutConfig) withDefaults(quick bool) FanOutConfig {
	if len(c.Calls) == 0 {
		c.Calls = []int{1, 4, 16, 64}
	}
	c.ToolTime = orDefault(c.ToolTime, 5*time.Millisecond, 5*time.Millisecond, quick)
	c.Rounds = orDefault(c.Rounds, 40, 12, quick)
	c.WarmUp = orDefault(c.WarmUp, 3, 3, quick)
	return c
}

// FanOutResult is the turn time of each fan-out size relative to the
// first (one call).
type FanOutResult struct {
	// Rounds is the number of measured rounds.
	Rounds int `json:"rounds"`
	// ToolTimeMillis is the wait of each tool call.
	ToolTimeMillis float64 `json:"tool_time_ms"`
	// Rows hold one result per size, the baseline first.
	Rows []FanOutSize `json:"sizes"`
}

// FanOutSize is the result of one fan-out size.
type FanOutSize struct {
	// Calls is the number of tool calls in the reply.
	Calls int `json:"calls"`
	// TurnMillis is the median turn time.
	TurnMillis float64 `json:"turn_ms"`
	// Ratio is the median over rounds of this size's turn time over the
	// baseline's: 1.0 means the calls ran fully in parallel, Calls means
	// one after the other.
	Ratio float64 `json:"ratio"`
}

// FanOut measures parallel tool calls. An in-process scripted model answers
// a user message "fan N" with N calls of a tool that waits ToolTime on a
// timer, then answers the results with text; the runtime's parallelism
// limit is raised to the largest N. Every round runs one turn of each size,
// in an order that rotates from round to round, each turn on a new
// session.
func FanOut(ctx context.Context, cfg FanOutConfig) (*FanOutResult, error) {
	cfg = cfg.withDefaults(false)
	script := scripted.Script{Stateless: true}
	maxCalls := 0
	for _, n := range cfg.Calls {
		calls := make([]scripted.ToolCall, n)
		for i := range calls {
			calls[i] = scripted.ToolCall{Name: "wait", Arguments: fmt.Sprintf(`{"ms":%d}`, cfg.ToolTime.Milliseconds())}
		}
		script.Rules = append(script.Rules, scripted.Rule{Match: scripted.Match{Role: messages.RoleUser, Exact: fanPrompt(n)}, Reply: scripted.Reply{ToolCalls: calls}})
		maxCalls = max(maxCalls, n)
	}
	script.Rules = append(script.Rules, scripted.Rule{Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "All done."}})
	model, err := scripted.New(script, scripted.Options{})
	if err != nil {
		return nil, err
	}
	reg := toolsys.NewRegistry(toolsys.Config{})
	toolsys.MustRegisterTyped[waitParams](reg, waitTool{})
	rt, err := actors.NewInMemory(actors.Config{Provider: model, Tools: reg, IdleTimeout: -1,
		Compaction: actors.Compaction{Disabled: true}, Limits: actors.Limits{MaxParallelTools: maxCalls}})
	if err != nil {
		return nil, err
	}
	defer func() { _ = rt.Shutdown(context.WithoutCancel(ctx)) }()

	// Every turn opens a session of its own: a session reused across
	// turns would carry its earlier rounds into both model requests of the
	// next, so that the 64-call turns would send and repair hundreds of
	// earlier results the 1-call turns do not, which is the cost of a
	// longer conversation, not of running calls in parallel.
	const turnsPerSession = 1
	times := make([][]float64, len(cfg.Calls))  // per size: turn ms per round
	ratios := make([][]float64, len(cfg.Calls)) // per size: ratio to the baseline per round
	sessions := make([]*actors.Session, len(cfg.Calls))
	for round := range cfg.WarmUp + cfg.Rounds {
		took := make([]float64, len(cfg.Calls))
		for k := range cfg.Calls {
			i := (k + round) % len(cfg.Calls)
			n := cfg.Calls[i]
			if round%turnsPerSession == 0 {
				if sessions[i], err = rt.Open(ctx, fmt.Sprintf("fan-%d-%d", n, round)); err != nil {
					return nil, err
				}
			}
			start := time.Now()
			res, err := sessions[i].Submit(ctx, messages.UserText(fanPrompt(n)))
			took[i] = millis(time.Since(start))
			if err != nil {
				return nil, err
			}
			if err := checkTurn(res, n); err != nil {
				return nil, err
			}
		}
		if round < cfg.WarmUp {
			continue
		}
		for i := range cfg.Calls {
			times[i] = append(times[i], took[i])
			ratios[i] = append(ratios[i], ratio(took[i], took[0]))
		}
	}
	res := &FanOutResult{Rounds: cfg.Rounds, ToolTimeMillis: millis(cfg.ToolTime)}
	for i, n := range cfg.Calls {
		res.Rows = append(res.Rows, FanOutSize{Calls: n, TurnMillis: median(times[i]), Ratio: median(ratios[i])})
	}
	return res, nil
}

func fanPrompt(n int) string { return "fan " + strconv.Itoa(n) }

// Table lays the result out.
func (r *FanOutResult) Table() Table {
	t := Table{
		Title:   fmt.Sprintf("parallel tool fan-out (%d rounds, each call waits %.0f ms, in-process scripted model)", r.Rounds, r.ToolTimeMillis),
		Columns: []string{"calls per reply", "turn time (median)", "vs 1 call", "if sequential"},
		Notes: []string{
			"1.00x means every call of the reply ran at the same time; the last column is what running them one after the other would give.",
		},
	}
	for _, row := range r.Rows {
		base := 1
		if len(r.Rows) > 0 {
			base = r.Rows[0].Calls
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(row.Calls), fmtFloat(row.TurnMillis, 2) + " ms", fmtRatio(row.Ratio), fmtRatio(float64(row.Calls) / float64(base))})
	}
	return t
}
