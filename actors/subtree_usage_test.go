package actors_test

import (
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// TestTurnResult_SubtreeUsage runs a turn that delegates to a sub-agent:
// Usage counts the session's own model calls only, and SubtreeUsage adds
// the sub-agent's, matching Session.Usage.
func TestTurnResult_SubtreeUsage(t *testing.T) {
	usage := func(p, c int64) *messages.Usage {
		return &messages.Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
	}
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Exact: "delegate"}, Reply: scripted.Reply{Usage: usage(10, 1), ToolCalls: []scripted.ToolCall{
			{Name: actors.SpawnAgentToolName, Arguments: `{"agent":"worker","task":"compute the answer"}`}}}},
		{Match: scripted.Match{Exact: "compute the answer"}, Reply: scripted.Reply{Usage: usage(100, 5), Text: "42"}},
		{Match: scripted.Match{Tool: actors.SpawnAgentToolName}, Reply: scripted.Reply{Usage: usage(20, 2), Text: "The worker says 42."}},
	}}
	f := newFixture(t, script, nil, func(c *actors.Config) {
		c.Agents = []actors.AgentProfile{{Name: "lead"}, {Name: "worker"}}
		c.SubAgents = actors.SubAgents{Enabled: true}
	})
	res, err := f.sess.Submit(t.Context(), messages.UserText("delegate"))
	if err != nil {
		t.Fatal(err)
	}
	if want := *usage(30, 3); res.Usage != want {
		t.Errorf("Usage = %+v, want the session's own calls %+v", res.Usage, want)
	}
	if want := *usage(130, 8); res.SubtreeUsage != want {
		t.Errorf("SubtreeUsage = %+v, want %+v with the sub-agent's", res.SubtreeUsage, want)
	}
	rep, err := f.sess.Usage(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total != res.SubtreeUsage {
		t.Errorf("Session.Usage().Total = %+v, SubtreeUsage = %+v", rep.Total, res.SubtreeUsage)
	}
}
