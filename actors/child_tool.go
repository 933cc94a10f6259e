package actors

// This file holds toolExec, one tool call a session runs off its mailbox.

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// toolExec is one tool call of a session's turn, under its own context
// (the turn's, with the call's deadline). It runs as work the session
// starts (on the runtime's workers, never in the session's mailbox) and
// reports through the round's results and a toolDone; a panic that escapes the tool becomes an
// error result, and a call that overruns its deadline is answered by the
// session while it finishes.
type toolExec struct {
	rt  *Runtime
	gen uint64
	ctx context.Context
	// timeout is the call's deadline, which starts once the call may run
	// (after its approval); zero or negative means none.
	timeout time.Duration
	call    messages.ToolCall
	tc      *toolsys.Context
	// results is the round's channel of results (see turnRun).
	results chan<- *toolDone
	// approver records the call's approval, if it needs one; nil means
	// the permission pipeline's own approver.
	approver toolsys.Approver
}

// run makes the call, hands its result to the round's results, and
// returns it as its report to the session, a *toolDone. A tool call sends
// nothing to the session along the way (its progress goes through
// toolsys.Context.Progress).
func (x *toolExec) run(func(any)) (report any) {
	defer func() {
		if v := recover(); v != nil {
			x.tc.Logger.Error().Interface("panic", v).Str("stack", string(debug.Stack())).Msg("tool panicked")
			report = x.done(&toolDone{gen: x.gen, callID: x.call.ID, panicked: v})
		}
	}()
	res, err := x.execute()
	return x.done(&toolDone{gen: x.gen, callID: x.call.ID, result: res, err: err})
}

// done hands d to the round's results and returns it.
func (x *toolExec) done(d *toolDone) *toolDone {
	x.results <- d
	return d
}

func (x *toolExec) execute() (toolsys.Result, error) {
	ctx := x.ctx
	if x.approver != nil {
		ctx = toolsys.WithApprover(ctx, x.approver)
	}
	return x.rt.tools.call(ctx, x.call.Name, json.RawMessage(x.call.Arguments), x.tc, x.timeout)
}
