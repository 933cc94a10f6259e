package actors

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/agcore/agcore/messages"
)

// DefaultAgentName is the name of the profile a runtime configured without
// agents uses.
const DefaultAgentName = "default"

// AgentProfile is a role a session can play: its prompt, model, tools and
// limits. Switching the profile of a live session is journaled.
type AgentProfile struct {
	// Name identifies the profile. Required, unique.
	Name string
	// Description says what the agent is for (shown to operators).
	Description string
	// Prompt is the agent's layer of the system prompt, a text/template.
	// Its data holds Config.PromptVars, then Vars, then Session, Agent,
	// Turn, Date and Workspace. A variable that is not defined is an error
	// (missingkey=error), never "<no value>".
	Prompt string
	// Vars are this agent's template variables.
	Vars map[string]any
	// Model is the "provider/model" the agent talks to. Empty means
	// Config.Model.
	Model string
	// Tools is the allow-list of tool names or path.Match patterns
	// ("mcp__fs__*"). Nil means every tool; an empty non-nil slice means
	// none.
	Tools []string
	// Limits override the runtime's limits field by field (zero fields
	// keep the runtime's values; MidTurn is the runtime's).
	Limits Limits
	// Retrieve enables the retrieved-knowledge layer of the prompt and the
	// retrieve tool (when Config.Knowledge is set).
	Retrieve bool
}

// agent is a compiled AgentProfile.
type agent struct {
	AgentProfile
	tmpl   *template.Template
	limits Limits
}

// allowed reports whether the agent may call the named tool.
func (a *agent) allowed(name string) bool {
	if name == retrieveToolName {
		return a.Retrieve
	}
	if a.Tools == nil {
		return true
	}
	return slices.ContainsFunc(a.Tools, func(pattern string) bool {
		ok, err := path.Match(pattern, name)
		return err == nil && ok
	})
}

func compileTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").Parse(text)
}

// compileAgents validates the profiles and compiles their prompts.
func compileAgents(profiles []AgentProfile, base Limits) (map[string]*agent, []string, error) {
	if len(profiles) == 0 {
		profiles = []AgentProfile{{Name: DefaultAgentName}}
	}
	out := make(map[string]*agent, len(profiles))
	order := make([]string, 0, len(profiles))
	for i, p := range profiles {
		if p.Name == "" {
			return nil, nil, configErr(fmt.Sprintf("Agents[%d].Name", i), "empty")
		}
		if _, dup := out[p.Name]; dup {
			return nil, nil, configErr(fmt.Sprintf("Agents[%d].Name", i), "duplicate agent %q", p.Name)
		}
		t, err := compileTemplate(p.Name, p.Prompt)
		if err != nil {
			return nil, nil, configErr(fmt.Sprintf("Agents[%d].Prompt", i), "%v", err)
		}
		p.Vars = maps.Clone(p.Vars)
		p.Tools = slices.Clone(p.Tools)
		out[p.Name] = &agent{AgentProfile: p, tmpl: t, limits: base.merge(p.Limits)}
		order = append(order, p.Name)
	}
	return out, order, nil
}

// promptInput is what the prompt layers of one model call are built from.
type promptInput struct {
	session   string
	turn      int
	agent     *agent
	note      string
	query     string
	now       time.Time
	workspace string
}

// systemPrompt layers the system prompt of one model call: base, agent,
// environment, the agent-switch note, the session-memory snapshot and the
// retrieved knowledge. Empty layers are left out.
func (rt *Runtime) systemPrompt(ctx context.Context, in promptInput) (string, error) {
	data := make(map[string]any, len(rt.cfg.PromptVars)+len(in.agent.Vars)+5)
	maps.Copy(data, rt.cfg.PromptVars)
	maps.Copy(data, in.agent.Vars)
	data["Session"] = in.session
	data["Agent"] = in.agent.Name
	data["Turn"] = in.turn
	data["Date"] = in.now.UTC().Format("2006-01-02")
	data["Workspace"] = in.workspace

	var layers []string
	for _, t := range []*template.Template{rt.base, in.agent.tmpl} {
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return "", fmt.Errorf("prompt %q: %w", t.Name(), err)
		}
		layers = append(layers, b.String())
	}
	env := fmt.Sprintf("<environment>\nsession: %s\nagent: %s\ndate: %s\n", in.session, in.agent.Name, data["Date"])
	if in.workspace != "" {
		env += "workspace: " + in.workspace + "\n"
	}
	layers = append(layers, env+"</environment>")
	if in.note != "" {
		layers = append(layers, "<agent-note>\n"+in.note+"\n</agent-note>")
	}
	if rt.sessionMemory != nil {
		snap, err := rt.sessionMemory.Snapshot(ctx, in.session)
		if err != nil {
			return "", fmt.Errorf("prompt: session memory: %w", err)
		}
		layers = append(layers, snap)
	}
	if in.agent.Retrieve && rt.cfg.Knowledge != nil && strings.TrimSpace(in.query) != "" {
		passages, err := rt.retrieve(ctx, in.query, retrieveLayerLimit)
		if err != nil {
			return "", fmt.Errorf("prompt: knowledge: %w", err)
		}
		layers = append(layers, renderPassages(passages))
	}
	layers = slices.DeleteFunc(layers, func(s string) bool { return strings.TrimSpace(s) == "" })
	return strings.Join(layers, "\n\n"), nil
}

// renderPassages renders retrieved passages as a <knowledge> block, ""
// for none.
func renderPassages(ps []Passage) string {
	if len(ps) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<knowledge>\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "## %s\n%s\n", p.Title, p.Text)
	}
	b.WriteString("</knowledge>")
	return b.String()
}

// lastUserText returns the text of the last user message of msgs.
func lastUserText(msgs []messages.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == messages.RoleUser {
			return msgs[i].Text()
		}
	}
	return ""
}
