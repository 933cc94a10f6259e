package actors

// This file turns a tool's progress reports into ToolProgress events on
// the turn's stream.

import (
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// progressHook is the toolsys.Context.Progress of call callID of work gen:
// it hands each report to the session, from whichever goroutine the tool
// reports on, without waiting.
func (a *sessionActor) progressHook(gen uint64, callID string) func(toolsys.Progress) {
	root, self := a.rt.system.Root, a.actx.Self()
	return func(p toolsys.Progress) {
		root.Send(self, &toolProgress{gen: gen, callID: callID, progress: p})
	}
}

// onToolProgress publishes a ToolProgress for a call of the running turn
// that has not finished; a report that arrives after the call's result
// (or from a cancelled turn) is dropped. Progress is not journaled.
func (a *sessionActor) onToolProgress(m *toolProgress) {
	t := a.turn
	if t == nil || m.gen != a.c.gen {
		return
	}
	run, ok := t.running[m.callID]
	if !ok {
		return
	}
	a.publish(messages.ToolProgress{EventMeta: a.meta(), CallID: m.callID, Name: run.call.Name,
		Progress: m.progress.Progress, Total: m.progress.Total, Message: m.progress.Message})
}
