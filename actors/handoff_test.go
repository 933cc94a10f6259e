package actors_test

import (
	"strings"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

func TestTransferToAgent(t *testing.T) {
	tests := []struct {
		name, args string
		wantAgent  string
		wantError  string
	}{
		{"to billing", `{"agent": "billing", "reason": "a refund"}`, "billing", ""},
		{"unknown agent", `{"agent": "sales"}`, "triage", `unknown agent "sales"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			script := toolScript("handled", scripted.ToolCall{Name: actors.TransferToolName, Arguments: tt.args})
			f := newFixture(t, script, nil, func(c *actors.Config) {
				c.Agents = []actors.AgentProfile{
					{Name: "triage", Prompt: "You route requests.", Tools: []string{actors.TransferToolName}},
					{Name: "billing", Description: "refunds and invoices", Prompt: "You handle billing."},
				}
				c.SubAgents = actors.SubAgents{Handoff: true}
				c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
			})
			evs := collect(t, f.sess, "I want my money back")
			finished := eventsOf[messages.ToolFinished](evs)
			if len(finished) != 1 || (tt.wantError == "") == finished[0].IsError || !strings.Contains(finished[0].Content, tt.wantError) {
				t.Fatalf("transfer result = %+v", finished)
			}
			last := rec.last(actors.PreRequest)
			if last.Agent != tt.wantAgent {
				t.Errorf("the second model call was %q's, want %q's", last.Agent, tt.wantAgent)
			}
			system := last.Request.Messages[0].Text()
			changed := eventsOf[messages.AgentChanged](evs)
			if tt.wantError == "" {
				if !strings.Contains(system, "You handle billing.") || !strings.Contains(system, "Reason for the hand-off: a refund") {
					t.Errorf("the new agent's system prompt = %q", system)
				}
				if len(changed) != 1 || changed[0].From != "triage" || changed[0].To != "billing" {
					t.Errorf("AgentChanged = %+v", changed)
				}
			} else if len(changed) != 0 {
				t.Errorf("AgentChanged = %+v after a refused transfer", changed)
			}
			st, err := f.sess.Status(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if st.Agent != tt.wantAgent {
				t.Errorf("Status.Agent = %q, want %q", st.Agent, tt.wantAgent)
			}
		})
	}
}
