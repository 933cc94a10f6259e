package actors

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// resolveModel returns the provider and model an agent talks to.
func (rt *Runtime) resolveModel(a *agent) (providers.Provider, string, error) {
	ref := a.Model
	if ref == "" {
		ref = rt.cfg.Model
	}
	return rt.providers.Resolve(ref)
}

// toolDefinitions returns the tools an agent may call.
func (rt *Runtime) toolDefinitions(a *agent) []messages.ToolDefinition {
	var defs []messages.ToolDefinition
	if rt.cfg.Tools != nil {
		for _, d := range rt.cfg.Tools.Definitions() {
			if a.allowed(d.Name) {
				defs = append(defs, d)
			}
		}
	}
	if a.Retrieve && rt.cfg.Knowledge != nil {
		defs = append(defs, retrieveDefinition)
	}
	defs = append(defs, rt.swarm.definitions(a)...)
	return defs
}

func (rt *Runtime) workspaceRoot() string {
	if rt.cfg.Workspace == nil {
		return ""
	}
	return rt.cfg.Workspace.Root()
}

// replayTurn answers a resubmitted turn id whose turn has ended: it reads
// how the turn ended from the journal and delivers that TurnEnded to sub.
func (rt *Runtime) replayTurn(session, turnID string, turn int, sub *subscriber) {
	ended, err := rt.findTurnEnd(rt.ctx, session, turnID, turn)
	if err != nil {
		sub.fail(err)
		return
	}
	sub.deliver(ended)
}

func (rt *Runtime) findTurnEnd(ctx context.Context, session, turnID string, turn int) (messages.TurnEnded, error) {
	ended := messages.TurnEnded{EventMeta: messages.EventMeta{Session: session, Turn: turn}, TurnID: turnID}
	found := false
	for entry, err := range rt.journal.Read(ctx, session, 1) {
		if err != nil {
			return ended, err
		}
		switch ev := entry.Event.(type) {
		case messages.AssistantMessage:
			if ev.Turn == turn {
				ended.Text, ended.FinishReason = ev.Message.Text(), ev.FinishReason
			}
		case messages.TurnCompleted:
			if ev.Turn == turn {
				ended.Outcome, ended.Reason, ended.Usage, ended.Cost, ended.RoundTrips = ev.Outcome, ev.Reason, ev.Usage, ev.Cost, ev.RoundTrips
				ended.FinishReason = ev.FinishReason
				found = true
			}
		case messages.TurnCancelled:
			if ev.Turn == turn {
				ended.Outcome, ended.Reason = messages.OutcomeCancelled, ev.Reason
				found = true
			}
		}
	}
	if !found {
		return ended, fmt.Errorf("%w: session %s turn %d (%s)", ErrTurnNotFound, session, turn, turnID)
	}
	return ended, nil
}
