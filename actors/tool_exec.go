package actors

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
	// caller describes the session to the runtime's built-in tools.
	caller *caller
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
	raw := json.RawMessage(x.call.Arguments)
	if x.call.Name == retrieveToolName {
		return x.rt.retrieveTool(x.ctx, raw)
	}
	if tool, ok := x.rt.swarm.tool(x.call.Name); ok {
		return tool.Execute(withCaller(x.ctx, x.caller), raw, x.tc)
	}
	if x.rt.cfg.Tools == nil {
		return toolsys.ErrorResult("unknown tool %q: no tools are configured", x.call.Name), nil
	}
	return x.rt.cfg.Tools.Call(toolsys.WithApprover(x.ctx, x.approver), x.call.Name, raw, x.tc)
}
