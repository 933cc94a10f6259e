package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// SubAgentUsage is what one sub-agent subtree spent.
type SubAgentUsage struct {
	// Turn and CallID name the spawn_agent call of the parent's turn.
	Turn   int    `json:"turn"`
	CallID string `json:"call_id"`
	// Child is the sub-agent's session id.
	Child   string               `json:"child"`
	Agent   string               `json:"agent,omitempty"`
	Outcome messages.TurnOutcome `json:"outcome"`
	// Usage and Cost cover the sub-agent and everything it spawned.
	Usage messages.Usage `json:"usage"`
	Cost  float64        `json:"cost,omitempty"`
	// RoundTrips counts the subtree's model calls.
	RoundTrips int `json:"round_trips,omitempty"`
}

// UsageReport is what a session spent: its own model calls, each finished
// sub-agent subtree, and the total. Total equals Status.Usage.
type UsageReport struct {
	Session   string          `json:"session"`
	Own       messages.Usage  `json:"own"`
	OwnCost   float64         `json:"own_cost,omitempty"`
	SubAgents []SubAgentUsage `json:"subagents,omitempty"`
	Total     messages.Usage  `json:"total"`
	TotalCost float64         `json:"total_cost,omitempty"`
}

// Usage reads the session's journal and reports its usage: its own model
// calls, each finished sub-agent's subtree in the order they finished, and
// the sum of both. A sub-agent that was cancelled, failed or stopped by its
// budget counts with what its subtree spent until then: when the session
// is active, Usage first waits for the sub-agents of its ended turns (a
// cancelled turn ends before they have stopped) to report.
func (s *Session) Usage(ctx context.Context) (UsageReport, error) {
	rep := UsageReport{Session: s.id}
	if err := s.settle(ctx); err != nil {
		return rep, err
	}
	spawned := map[string]messages.SubAgentSpawned{}
	for entry, err := range s.rt.journal.Read(ctx, s.id, 1) {
		if errors.Is(err, memory.ErrNotFound) {
			break
		}
		if err != nil {
			return rep, fmt.Errorf("actors: usage of %s: %w", s.id, err)
		}
		switch ev := entry.Event.(type) {
		case messages.AssistantMessage:
			rep.Own = rep.Own.Add(ev.Usage)
			rep.OwnCost += ev.Cost
		case messages.SubAgentSpawned:
			spawned[ev.Child] = ev
		case messages.SubAgentFinished:
			sp := spawned[ev.Child]
			rep.SubAgents = append(rep.SubAgents, SubAgentUsage{Turn: sp.Turn, CallID: ev.CallID, Child: ev.Child, Agent: sp.Agent,
				Outcome: ev.Outcome, Usage: ev.Usage, Cost: ev.Cost, RoundTrips: ev.RoundTrips})
		}
	}
	rep.Total, rep.TotalCost = rep.Own, rep.OwnCost
	for _, sa := range rep.SubAgents {
		rep.Total = rep.Total.Add(sa.Usage)
		rep.TotalCost += sa.Cost
	}
	return rep, nil
}

// settle waits, when the session is active, until the sub-agents of its
// ended turns have reported their results (see settleCmd).
func (s *Session) settle(ctx context.Context) error {
	s.rt.mu.Lock()
	e := s.rt.entries[s.id]
	s.rt.mu.Unlock()
	if e == nil {
		return nil
	}
	reply := make(chan Status, 1)
	s.rt.system.Root.Send(e.pid, &settleCmd{reply: reply})
	select {
	case <-reply:
	case <-e.gone:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}
