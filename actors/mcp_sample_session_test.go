package actors_test

import (
	"strings"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys/mcp"
)

// TestMCP_SamplingBelongsToTheSession runs a sampling request attributed
// to a session: it waits as a pending approval of that session (listed,
// published, answered through Runtime.Approve), is answered by the
// session's agent's model (not the runtime's default), and is journaled
// and counted in the session's usage.
func TestMCP_SamplingBelongsToTheSession(t *testing.T) {
	cfg := samplingServer(t).config("srv")
	cfg.Sampling = true
	session, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Exact: "use the tool"}, Reply: scripted.Reply{
			ToolCalls: []scripted.ToolCall{{ID: "call-1", Name: "mcp__srv__ask_model", Arguments: `{}`}}}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "Say hi"}, Reply: scripted.Reply{Text: "hi from the session's model"}},
		{Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "done"}},
	}}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, textScript("hi from the default model"), nil, func(c *actors.Config) {
		reg := &providers.Registry{}
		if err := reg.Register("other", c.Provider); err != nil {
			t.Fatal(err)
		}
		if err := reg.Register("main", session); err != nil {
			t.Fatal(err)
		}
		c.Providers, c.Provider, c.Model = reg, nil, "other/x"
		c.Agents = []actors.AgentProfile{{Name: "worker", Model: "main/m"}}
		c.MCPServers = []mcp.ServerConfig{cfg}
		c.Approver = actors.ManualApprover()
	})
	waitMCP(t, f.rt, "srv")
	var listed []actors.PendingApproval
	var result string
	var reported []messages.UsageReported
	for ev, err := range f.sess.Stream(t.Context(), messages.UserText("use the tool")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case messages.ApprovalPending:
			listed = f.rt.Approvals()
			if err := f.rt.Approve(t.Context(), "s1", e.CallID, true, ""); err != nil {
				t.Errorf("Approve: %v", err)
			}
		case messages.UsageReported:
			reported = append(reported, e)
		case messages.ToolFinished:
			result = e.Content
		}
	}
	if len(listed) != 1 || listed[0].Session != "s1" || listed[0].Tool != "mcp__srv__sampling" || !strings.HasPrefix(listed[0].CallID, "call-1/") ||
		!strings.Contains(listed[0].Arguments, "Say hi") {
		t.Fatalf("Approvals() = %+v, want the sampling request of s1's call-1", listed)
	}
	if result != "hi from the session's model" {
		t.Fatalf("tool result %q, want the session's model's answer", result)
	}
	var sampled []messages.SamplingAnswered
	var own messages.Usage
	var approvals []string
	for e, err := range f.rt.Journal().Read(t.Context(), "s1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := e.Event.(type) {
		case messages.SamplingAnswered:
			sampled = append(sampled, ev)
			own = own.Add(ev.Usage)
		case messages.AssistantMessage:
			own = own.Add(ev.Usage)
		case messages.ApprovalRequested:
			approvals = append(approvals, "requested "+ev.Tool)
		case messages.ApprovalGranted:
			approvals = append(approvals, "granted by "+ev.By)
		}
	}
	if len(sampled) != 1 || sampled[0].Server != "srv" || sampled[0].CallID != "call-1" || sampled[0].Text != "hi from the session's model" ||
		sampled[0].Usage.TotalTokens == 0 || !strings.Contains(sampled[0].Request, "Say hi") {
		t.Fatalf("journaled sampling %+v", sampled)
	}
	if want := []string{"requested mcp__srv__sampling", "granted by " + actors.DecidedByCaller}; strings.Join(approvals, ",") != strings.Join(want, ",") {
		t.Fatalf("journaled approvals %v, want %v", approvals, want)
	}
	rep, err := f.sess.Usage(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Own != own || rep.Own.TotalTokens <= sampled[0].Usage.TotalTokens {
		t.Fatalf("session usage %+v, want the model calls and the sampling (%+v)", rep.Own, own)
	}
	sawSampling := false
	for _, u := range reported {
		if u.Usage == sampled[0].Usage && u.SessionUsage.TotalTokens >= u.Usage.TotalTokens {
			sawSampling = true
		}
	}
	if !sawSampling {
		t.Fatalf("no usage event for the sampling: %+v", reported)
	}
}
