package actors_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// agentTool records the Agent of the calls it serves.
type agentTool struct {
	mu     sync.Mutex
	agents []string
}

func (*agentTool) Name() string        { return "whoami" }
func (*agentTool) Description() string { return "records the calling agent" }
func (*agentTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (*agentTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (*agentTool) SecretParams() []string         { return nil }
func (*agentTool) Idempotent() bool               { return true }
func (a *agentTool) Execute(_ context.Context, _ json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.agents = append(a.agents, tc.Agent)
	return toolsys.Result{Content: "ok"}, nil
}

// TestPrompt_SkillsLayer: the skills layer follows the environment layer
// for an agent that may call the skill tool, and is left out for one that
// may not.
func TestPrompt_SkillsLayer(t *testing.T) {
	const layer = "<skills>\n- pdf: Work with PDF files.\n</skills>"
	for _, tc := range []struct {
		agent string
		tools []string
		want  bool
	}{
		{"coder", nil, true},
		{"reader", []string{"load_skill", "echo"}, true},
		{"chat", []string{"echo"}, false},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			rec := &recorder{}
			f := newFixture(t, textScript("ok"), nil, func(c *actors.Config) {
				c.EnvironmentPrompt = true
				c.Agents = []actors.AgentProfile{{Name: tc.agent, Prompt: "You are " + tc.agent + ".", Tools: tc.tools}}
				c.Skills = actors.SkillsLayer{Prompt: layer, Tool: "load_skill"}
				c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
			})
			if _, err := f.sess.Submit(t.Context(), messages.UserText("hi")); err != nil {
				t.Fatal(err)
			}
			sys := rec.last(actors.PreRequest).Request.Messages[0].Text()
			if got := strings.Contains(sys, layer); got != tc.want {
				t.Fatalf("system prompt holds the skills layer: %v, want %v:\n%s", got, tc.want, sys)
			}
			if tc.want && !strings.HasSuffix(sys, "</environment>\n\n"+layer) {
				t.Errorf("the skills layer does not follow the environment layer:\n%s", sys)
			}
		})
	}
}

// TestToolContext_Agent: a tool call's Context names the session's agent.
func TestToolContext_Agent(t *testing.T) {
	who := &agentTool{}
	f := newFixture(t, toolScript("done", scripted.ToolCall{Name: "whoami", Arguments: `{}`}), []toolsys.Tool{who}, func(c *actors.Config) {
		c.Agents = []actors.AgentProfile{{Name: "researcher"}}
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("go")); err != nil {
		t.Fatal(err)
	}
	who.mu.Lock()
	defer who.mu.Unlock()
	if len(who.agents) != 1 || who.agents[0] != "researcher" {
		t.Errorf("agents seen by the tool = %v, want [researcher]", who.agents)
	}
}
