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
// starts (on the runtime's executor pool, never in the session's mailbox)
// and reports through the round's results and a toolDone; a panic that escapes the tool becomes an
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

// run makes the call and reports to the session through send.
func (x *toolExec) run(send func(any)) {
	defer func() {
		if v := recover(); v != nil {
			x.tc.Logger.Error().Interface("panic", v).Str("stack", string(debug.Stack())).Msg("tool panicked")
			x.report(send, &toolDone{gen: x.gen, callID: x.call.ID, panicked: v})
		}
	}()
	res, err := x.execute()
	x.report(send, &toolDone{gen: x.gen, callID: x.call.ID, result: res, err: err})
}

// report hands d to the round's results, then tells the session.
func (x *toolExec) report(send func(any), d *toolDone) {
	x.results <- d
	send(d)
}

func (x *toolExec) execute() (toolsys.Result, error) {
	ctx := x.ctx
	if x.approver != nil {
		ctx = toolsys.WithApprover(ctx, x.approver)
	}
	return x.rt.tools.call(ctx, x.call.Name, json.RawMessage(x.call.Arguments), x.tc, x.timeout)
}
