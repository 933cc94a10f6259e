package actors

// This file holds AgentProfile and its compiled form, agent.

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"text/template"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// defaultAgentName is the name of the profile a runtime configured without
// agents uses.
const defaultAgentName = "default"

// AgentProfile is a role a session can play: its prompt, model, tools and
// limits. Switching the profile of a live session is journaled.
type AgentProfile struct {
	// Name identifies the profile. Required, unique.
	Name string
	// Description says what the agent is for (shown to operators).
	Description string
	// Prompt is the agent's layer of the system prompt, a text/template
	// that may use the templates of Config.Prompts.
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
	// Stream says whether the agent's model calls stream. Zero
	// (StreamDefault) means Config.Stream.
	Stream StreamMode
	// Params are the request parameters of the agent's model calls
	// (temperature, max tokens, tool choice, response format, ...). The
	// zero value sends none. WithParams overrides them for one turn.
	Params RequestParams
	// Output says how this agent's turns are asked for a structured
	// answer (see Config.StructuredOutput). Zero means the runtime's
	// setting for the agent's model.
	Output messages.OutputMode
}

// agent is a compiled AgentProfile.
type agent struct {
	AgentProfile
	tmpl   promptTemplate
	limits Limits
}

// allows reports whether the agent's allow-list admits the named tool.
func (a *agent) allows(name string) bool {
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

// compileAgents validates the profiles and compiles their prompts into
// prompts, the runtime's template set.
func compileAgents(profiles []AgentProfile, base Limits, prompts *template.Template) (map[string]*agent, []string, error) {
	if len(profiles) == 0 {
		profiles = []AgentProfile{{Name: defaultAgentName}}
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
		if p.Stream < StreamDefault || p.Stream > StreamOff {
			return nil, nil, configErr(fmt.Sprintf("Agents[%d].Stream", i), "unknown stream mode %v", p.Stream)
		}
		if err := validOutputMode(p.Output); err != nil {
			return nil, nil, configErr(fmt.Sprintf("Agents[%d].Output", i), "%v", err)
		}
		if err := p.Params.Validate(); err != nil {
			return nil, nil, fmt.Errorf("%w: Agents[%d].Params: %w", ErrConfig, i, err)
		}
		p.Params = p.Params.clone()
		t, err := compileIn(prompts, "agent "+p.Name, p.Prompt)
		if err != nil {
			return nil, nil, configErr(fmt.Sprintf("Agents[%d].Prompt", i), "%v", err)
		}
		p.Vars = maps.Clone(p.Vars)
		p.Tools = slices.Clone(p.Tools)
		out[p.Name] = &agent{AgentProfile: p, tmpl: newPromptTemplate(t), limits: base.merge(p.Limits)}
		order = append(order, p.Name)
	}
	return out, order, nil
}

// agentNames lists the agent profiles, sorted.
func (rt *Runtime) agentNames() []string {
	names := make([]string, 0, len(rt.agents))
	for name := range rt.agents {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// resolveModel returns the provider and model an agent talks to.
func (rt *Runtime) resolveModel(a *agent) (providers.Provider, string, error) {
	ref := a.Model
	if ref == "" {
		ref = rt.cfg.Model
	}
	return rt.providers.Resolve(ref)
}
