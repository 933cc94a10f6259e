package actors

// This file holds uniqueCallIDs, which gives every tool call of a reply an
// id of its own.

import (
	"fmt"
	"slices"

	"github.com/agcore/agcore/messages"
)

// uniqueCallIDs gives every tool call of a reply an id of its own: a model
// may send an empty id or repeat one (some OpenAI-compatible servers do),
// and the journal, the tool children and the results fed back to the model
// are keyed by it. Such a call gets "call_<turn>_<round trip>_<position>"
// (suffixed until it is unique). It returns a copy; calls is not changed.
func uniqueCallIDs(calls []messages.ToolCall, turn, roundTrip int) []messages.ToolCall {
	calls = slices.Clone(calls)
	seen := make(map[string]bool, len(calls))
	for _, c := range calls {
		if c.ID != "" {
			seen[c.ID] = false
		}
	}
	for i := range calls {
		if id := calls[i].ID; id != "" && !seen[id] {
			seen[id] = true
			continue
		}
		id := fmt.Sprintf("call_%d_%d_%d", turn, roundTrip, i+1)
		for n := 2; ; n++ {
			if _, taken := seen[id]; !taken {
				break
			}
			id = fmt.Sprintf("call_%d_%d_%d_%d", turn, roundTrip, i+1, n)
		}
		calls[i].ID = id
		seen[id] = true
	}
	return calls
}
