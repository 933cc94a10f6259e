package actors

// This file holds toolExec, the child of a session that runs one tool
// call.

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// toolExec is the child that runs one tool call under its own context
// (the turn's, with the call's deadline). It blocks its own mailbox, never
// the session's. A panic that escapes the tool reaches the session through
// the tool strategy and becomes an error result.
type toolExec struct {
	rt   *Runtime
	gen  uint64
	ctx  context.Context
	call messages.ToolCall
	tc   *toolsys.Context
	// approver records the call's approval, if it needs one; nil means
	// the permission pipeline's own approver.
	approver toolsys.Approver
}

// Receive implements actor.Actor.
func (x *toolExec) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); !ok {
		return
	}
	res, err := x.run()
	if err == nil && x.ctx.Err() != nil && errors.Is(x.ctx.Err(), context.DeadlineExceeded) {
		err = x.ctx.Err()
	}
	ctx.Send(ctx.Parent(), &toolDone{gen: x.gen, callID: x.call.ID, result: res, err: err})
	// The finished call lets go of what it held: protoactor may keep a
	// stopped child's PID, and so the child, reachable from its parent.
	*x = toolExec{}
	ctx.Stop(ctx.Self())
}

func (x *toolExec) run() (toolsys.Result, error) {
	ctx := x.ctx
	if x.approver != nil {
		ctx = toolsys.WithApprover(ctx, x.approver)
	}
	return x.rt.tools.call(ctx, x.call.Name, json.RawMessage(x.call.Arguments), x.tc)
}
