package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// ToolOptions configures the faults of a ToolSet or a Tool. The zero value
// injects nothing. PanicRate + HangRate must not exceed 1.
type ToolOptions struct {
	// PanicRate is the fraction of calls, in [0, 1], that panic with a
	// PanicValue instead of running.
	PanicRate float64
	// HangRate is the fraction of calls, in [0, 1], that block until their
	// context is done and then return its error, without running: a tool
	// that ignores everything but its deadline.
	HangRate float64
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
	// Panics and Hangs count the injected faults.
	Panics, Hangs int64
}

// injector draws the fault of each tool call.
type injector struct {
	panicRate, hangRate float64
	only                []string
	dice                *dice

	calls, panics, hangs atomic.Int64
}

func newInjector(opts ToolOptions) (*injector, error) {
	if err := checkRate("PanicRate", opts.PanicRate); err != nil {
		return nil, err
	}
	if err := checkRate("HangRate", opts.HangRate); err != nil {
		return nil, err
	}
	if opts.PanicRate+opts.HangRate > 1 {
		return nil, fmt.Errorf("%w: PanicRate + HangRate = %v, want at most 1", ErrOptions, opts.PanicRate+opts.HangRate)
	}
	return &injector{panicRate: opts.PanicRate, hangRate: opts.HangRate, only: slices.Clone(opts.Only), dice: newDice(opts.Seed)}, nil
}

// inject counts a call of tool and plays its fault: it panics, or hangs
// until ctx is done and reports true with ctx's error, or reports false
// when the call should run.
func (in *injector) inject(ctx context.Context, tool string, tc *toolsys.Context) (bool, error) {
	in.calls.Add(1)
	if len(in.only) > 0 && !slices.Contains(in.only, tool) {
		return false, nil
	}
	r := in.dice.roll()
	switch {
	case r < in.panicRate:
		in.panics.Add(1)
		v := PanicValue{Tool: tool}
		if tc != nil {
			v.CallID = tc.CallID
		}
		panic(v)
	case r < in.panicRate+in.hangRate:
		in.hangs.Add(1)
		<-ctx.Done()
		return true, fmt.Errorf("%w: tool %s hung: %w", ErrInjected, tool, ctx.Err())
	}
	return false, nil
}

func (in *injector) stats() ToolStats {
	return ToolStats{Calls: in.calls.Load(), Panics: in.panics.Load(), Hangs: in.hangs.Load()}
}

// Tools is a set of tools as a runtime consumes it: the method set of
// actors.Tools, which *toolsys.Registry implements.
type Tools interface {
	Call(ctx context.Context, name string, raw json.RawMessage, tc *toolsys.Context) (toolsys.Result, error)
	Definitions() []messages.ToolDefinition
	Get(name string) (toolsys.Tool, bool)
}

// ToolSet wraps a Tools so that a fraction of calls panic or hang outside
// any recovery the wrapped set does (a *toolsys.Registry recovers the
// panics of its tools; the panics of a ToolSet reach its caller). It is
// safe for concurrent use.
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

// Call panics, hangs, or calls the wrapped set's Call.
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

// Tool wraps one toolsys.Tool so that a fraction of its executions panic or
// hang; register it in a registry in place of the tool. Every other method
// is the wrapped tool's. It is safe for concurrent use.
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

// Execute panics, hangs, or runs the wrapped tool.
func (t *Tool) Execute(ctx context.Context, args json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	if hung, err := t.in.inject(ctx, t.Name(), tc); hung {
		return toolsys.Result{}, err
	}
	return t.Tool.Execute(ctx, args, tc)
}

// Stats returns what the tool has injected so far.
func (t *Tool) Stats() ToolStats { return t.in.stats() }
