package workload

import (
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// Script is the mock model. It is stateless, and its rules are tried in
// order:
//
//   - a tool message answering a "lookup" call that holds Result() gets
//     Answer();
//   - any other tool message gets a 400 error, so that a peer that sends a
//     wrong result (or none) fails the run;
//   - a user message gets a call of "lookup" with Arguments.
func Script() scripted.Script {
	return scripted.Script{
		Stateless: true,
		Rules: []scripted.Rule{
			{
				Name:  "answer",
				Match: scripted.Match{Tool: ToolName, Contains: Result()},
				Reply: scripted.Reply{Text: Answer()},
			},
			{
				Name:  "wrong-result",
				Match: scripted.Match{Role: messages.RoleTool},
				Reply: scripted.Reply{Fail: &scripted.Failure{
					Kind:    scripted.FailBadRequest,
					Message: "the tool result does not hold " + Result(),
				}},
			},
			{
				Name:  "call",
				Match: scripted.Match{Role: messages.RoleUser},
				Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: ToolName, Arguments: Arguments}}},
			},
		},
	}
}
