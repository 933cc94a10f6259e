package actors

// This file holds an MCP server's sampling request inside the session it
// is attributed to (svc_mcp_sample.go): it is approved through the
// session's approval path, as a call of the pseudo-tool
// mcp__<server>__sampling (journaled ApprovalRequested, published
// ApprovalPending, answered by Config.Approver or Runtime.Approve), and
// the answer of the session's model is journaled (SamplingAnswered) and
// counted in the session's usage, cost and budget.

import (
	"github.com/agcore/agcore/messages"
)

// samplingAskCmd puts a sampling request to the session's approval path.
// The reply says which agent answers it, or nil when no turn is running.
type samplingAskCmd struct {
	wait  *approvalWait
	reply chan *agent
}

// samplingDoneCmd records the model's answer to an approved sampling
// request; reply is closed once it is durable.
type samplingDoneCmd struct {
	entry messages.SamplingAnswered
	reply chan struct{}
}

func (*samplingAskCmd) isCommand()    {}
func (*samplingDoneCmd) isCommand()   {}
func (*samplingAskCmd) isElicitMsg()  {}
func (*samplingDoneCmd) isElicitMsg() {}

// onSamplingAsk journals the approval request of a sampling request made
// during the running turn, and replies with the session's agent.
func (a *sessionActor) onSamplingAsk(m *samplingAskCmd) {
	t := a.turn
	if t == nil {
		m.reply <- nil
		return
	}
	info := &m.wait.info
	info.Turn = t.index
	a.stage(messages.ApprovalRequested{Turn: t.index, CallID: info.CallID, Tool: info.Tool, Reason: info.Reason})
	if a.approvals == nil {
		a.approvals = make(map[string]*approvalWait)
	}
	a.approvals[info.CallID] = m.wait
	a.publish(messages.ApprovalPending{EventMeta: a.meta(), CallID: info.CallID, Tool: info.Tool, Reason: info.Reason})
	a.log.Info().Str("call", info.CallID).Str("tool", info.Tool).Msg("sampling approval requested")
	ag := a.agent()
	a.after(func() { m.reply <- ag })
}

// onSamplingDone journals the answer and its usage, and publishes the
// usage; the turn ends when it spends the session's budget.
func (a *sessionActor) onSamplingDone(m *samplingDoneCmd) {
	e := m.entry
	if a.turn != nil {
		e.Turn = a.turn.index
	}
	a.stage(e)
	if t := a.turn; t != nil {
		t.usage = t.usage.Add(e.Usage)
		t.cost += e.Cost
	}
	a.publish(messages.UsageReported{EventMeta: a.meta(), Model: e.Model, Usage: e.Usage, Cost: e.Cost,
		SessionUsage: a.st.Usage, SessionCost: a.st.Cost})
	a.after(func() { close(m.reply) })
	if reason := a.chargeBudget(e.Usage, e.Cost, 1); reason != "" && a.turn != nil {
		a.endTurn(messages.OutcomeLimit, reason)
	}
}
