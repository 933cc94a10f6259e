package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// DefaultSlowTool is the delay of a slow tool call when ToolOptions.Slow
// is zero.
const DefaultSlowTool = 100 * time.Millisecond

// ToolOptions configures the faults of a ToolSet or a Tool. The zero value
// injects nothing. Each call draws at most one fault: the rates must add up
// to at most 1.
type ToolOptions struct {
	// PanicRate is the fraction of calls, in [0, 1], that panic with a
	// PanicValue instead of running.
	PanicRate float64
	// HangRate is the fraction of calls, in [0, 1], that block until their
	// context is done and then return its error, without running: a tool
	// that ignores everything but its deadline.
	HangRate float64
	// ErrorRate is the fraction of calls, in [0, 1], that fail with an
	// error wrapping ErrInjected, without running.
	ErrorRate float64
	// SlowRate is the fraction of calls, in [0, 1], that wait Slow (or
	// until their context is done) before they run.
	SlowRate float64
	// Slow is the delay of a slow call. Zero means DefaultSlowTool.
	Slow time.Duration
	// OnFault receives every injected fault. Nil means none is reported
	// (Stats still counts them).
	OnFault Observer
	// Only restricts the faults to the tools with these names. Empty means
	// every tool.
	Only []string
	// Seed seeds the draws.
	Seed uint64
}

// ToolStats counts the calls of a ToolSet or a Tool.
type ToolStats struct {
	// Calls is the number of calls, faulty or not.
	Calls int64
	// Panics, Hangs, Errors and Slow count the injected faults.
	Panics, Hangs, Errors, Slow int64
}

// Injected returns the total number of injected faults.
func (s ToolStats) Injected() int64 { return s.Panics + s.Hangs + s.Errors + s.Slow }

// injector draws the fault of each tool call.
type injector struct {
	opts ToolOptions
	dice *dice

	calls, panics, hangs, errors, slow atomic.Int64
}

func newInjector(opts ToolOptions) (*injector, error) {
	if err := checkRates([]string{"PanicRate", "HangRate", "ErrorRate", "SlowRate"},
		opts.PanicRate, opts.HangRate, opts.ErrorRate, opts.SlowRate); err != nil {
		return nil, err
	}
	if err := checkDelay("Slow", opts.Slow); err != nil {
		return nil, err
	}
	if opts.Slow == 0 {
		opts.Slow = DefaultSlowTool
	}
	opts.Only = slices.Clone(opts.Only)
	return &injector{opts: opts, dice: newDice(opts.Seed)}, nil
}

// inject counts a call of tool and plays its fault: it panics, or hangs
// until ctx is done or fails and reports true with the call's error, or
// (after a delay, for a slow call) reports false when the call should run.
func (in *injector) inject(ctx context.Context, tool string, tc *toolsys.Context) (bool, error) {
	in.calls.Add(1)
	o := in.opts
	if len(o.Only) > 0 && !slices.Contains(o.Only, tool) {
		return false, nil
	}
	if o.PanicRate+o.HangRate+o.ErrorRate+o.SlowRate == 0 {
		return false, nil
	}
	f := Fault{Tool: tool}
	if tc != nil {
		f.CallID = tc.CallID
	}
	r := in.dice.roll()
	switch {
	case r < o.PanicRate:
		in.panics.Add(1)
		f.Kind = FaultPanic
		o.OnFault.observe(f)
		panic(PanicValue{Tool: tool, CallID: f.CallID})
	case r < o.PanicRate+o.HangRate:
		in.hangs.Add(1)
		f.Kind = FaultHang
		o.OnFault.observe(f)
		<-ctx.Done()
		return true, fmt.Errorf("%w: tool %s hung: %w", ErrInjected, tool, ctx.Err())
	case r < o.PanicRate+o.HangRate+o.ErrorRate:
		in.errors.Add(1)
		f.Kind = FaultToolError
		o.OnFault.observe(f)
		return true, fmt.Errorf("%w: tool %s failed", ErrInjected, tool)
	case r < o.PanicRate+o.HangRate+o.ErrorRate+o.SlowRate:
		in.slow.Add(1)
		f.Kind = FaultSlowTool
		o.OnFault.observe(f)
		if err := wait(ctx, o.Slow); err != nil {
			return true, fmt.Errorf("%w: slow tool %s: %w", ErrInjected, tool, err)
		}
	}
	return false, nil
}

func (in *injector) stats() ToolStats {
	return ToolStats{Calls: in.calls.Load(), Panics: in.panics.Load(), Hangs: in.hangs.Load(),
		Errors: in.errors.Load(), Slow: in.slow.Load()}
}

// Tools is a set of tools as a runtime consumes it: the method set of
// actors.Tools, which *toolsys.Registry implements.
type Tools interface {
	Call(ctx context.Context, name string, raw json.RawMessage, tc *toolsys.Context) (toolsys.Result, error)
	Definitions() []messages.ToolDefinition
	Get(name string) (toolsys.Tool, bool)
}

// ToolSet wraps a Tools so that a fraction of calls panic, hang, fail or
// run late, outside any recovery the wrapped set does (a *toolsys.Registry
// recovers the panics of its tools; the panics of a ToolSet reach its
// caller). It is safe for concurrent use.
type ToolSet struct {
	inner Tools
	in    *injector
}

var _ Tools = (*ToolSet)(nil)

// NewToolSet wraps inner. It fails with an error wrapping ErrOptions for
// invalid rates.
func NewToolSet(inner Tools, opts ToolOptions) (*ToolSet, error) {
	if inner == nil {
		return nil, fmt.Errorf("%w: nil tool set", ErrOptions)
	}
	in, err := newInjector(opts)
	if err != nil {
		return nil, err
	}
	return &ToolSet{inner: inner, in: in}, nil
}

// Call panics, hangs, fails, waits, or calls the wrapped set's Call.
func (s *ToolSet) Call(ctx context.Context, name string, raw json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	if hung, err := s.in.inject(ctx, name, tc); hung {
		return toolsys.Result{}, err
	}
	return s.inner.Call(ctx, name, raw, tc)
}

// Definitions returns the wrapped set's definitions.
func (s *ToolSet) Definitions() []messages.ToolDefinition { return s.inner.Definitions() }

// Get returns the wrapped set's tool.
func (s *ToolSet) Get(name string) (toolsys.Tool, bool) { return s.inner.Get(name) }

// Stats returns what the set has injected so far.
func (s *ToolSet) Stats() ToolStats { return s.in.stats() }

// Tool wraps one toolsys.Tool so that a fraction of its executions panic,
// hang, fail or run late; register it in a registry in place of the tool.
// Every other method is the wrapped tool's. It is safe for concurrent use.
type Tool struct {
	toolsys.Tool
	in *injector
}

var _ toolsys.Tool = (*Tool)(nil)

// NewTool wraps t. It fails with an error wrapping ErrOptions for invalid
// rates.
func NewTool(t toolsys.Tool, opts ToolOptions) (*Tool, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: nil tool", ErrOptions)
	}
	in, err := newInjector(opts)
	if err != nil {
		return nil, err
	}
	return &Tool{Tool: t, in: in}, nil
}

// Execute panics, hangs, fails, waits, or runs the wrapped tool.
func (t *Tool) Execute(ctx context.Context, args json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	if hung, err := t.in.inject(ctx, t.Name(), tc); hung {
		return toolsys.Result{}, err
	}
	return t.Tool.Execute(ctx, args, tc)
}

// Stats returns what the tool has injected so far.
func (t *Tool) Stats() ToolStats { return t.in.stats() }
