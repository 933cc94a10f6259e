package actors

// This file holds the usage report of a session (Session.Usage).

import "github.com/agcore/agcore/messages"

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
