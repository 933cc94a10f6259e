package actors

// This file turns a tool's progress reports into ToolProgress events on
// the turn's stream, and bounds how many of a call's reports wait in the
// session's mailbox.

import (
	"sync"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// maxQueuedProgress is how many progress reports of one call may wait in
// the session's mailbox; beyond them only the latest report is kept.
const maxQueuedProgress = 64

// progressHook is the toolsys.Context.Progress of call callID of work gen:
// it hands each report to the session, from whichever goroutine the tool
// reports on, without waiting. A tool (or an MCP server) that reports
// faster than the session publishes cannot fill the mailbox: see
// progressLatch.
func (a *sessionActor) progressHook(gen uint64, callID string) func(toolsys.Progress) {
	root, self := a.rt.system.Root, a.actx.Self()
	latch := &progressLatch{}
	return func(p toolsys.Progress) {
		if latch.offer(p) {
			root.Send(self, &toolProgress{gen: gen, callID: callID, progress: p, latch: latch})
		}
	}
}

// progressLatch bounds the progress reports of one call in the session's
// mailbox: up to maxQueuedProgress are sent as they come; while that many
// wait, a new report replaces the one held back before it, and the session
// publishes the held report once it has taken every report sent before.
// Reports are published in the order they were made; under a flood, the
// intermediate ones are skipped and the latest is not lost.
type progressLatch struct {
	mu     sync.Mutex
	queued int               // reports sent and not yet taken
	held   *toolsys.Progress // the latest report not sent
}

// offer reports whether p is to be sent; if not, it is held back.
func (l *progressLatch) offer(p toolsys.Progress) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.queued < maxQueuedProgress {
		l.queued++
		return true
	}
	l.held = &p
	return false
}

// take counts one sent report as taken, and returns the held report when
// it was the last one waiting.
func (l *progressLatch) take() (toolsys.Progress, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queued--
	if l.queued > 0 || l.held == nil {
		return toolsys.Progress{}, false
	}
	p := *l.held
	l.held = nil
	return p, true
}

// onToolProgress publishes a ToolProgress for a call of the running turn
// that has not finished, followed by the report held back behind it, if
// any; a report that arrives after the call's result (or from a cancelled
// turn) is dropped. Progress is not journaled.
func (a *sessionActor) onToolProgress(m *toolProgress) {
	held, ok := m.latch.take()
	a.publishProgress(m.gen, m.callID, m.progress)
	if ok {
		a.publishProgress(m.gen, m.callID, held)
	}
}

// publishProgress publishes p for call callID of work gen, if that call
// is still running.
func (a *sessionActor) publishProgress(gen uint64, callID string, p toolsys.Progress) {
	t := a.turn
	if t == nil || gen != a.c.gen {
		return
	}
	run, ok := t.running[callID]
	if !ok {
		return
	}
	a.publish(messages.ToolProgress{EventMeta: a.meta(), CallID: callID, Name: run.call.Name,
		Progress: p.Progress, Total: p.Total, Message: p.Message})
}
