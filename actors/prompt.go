package actors

// This file holds the layering of the system prompt of a model call.

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	"github.com/agcore/agcore/messages"
)

// retrieveLayerLimit is the number of passages the prompt's knowledge
// layer holds.
const retrieveLayerLimit = 3

// promptInput is what the prompt layers of one model call are built from:
// the call's session, turn and agent, and the layers the session keeps
// from its earlier calls.
type promptInput struct {
	session   string
	turn      int
	agent     *agent
	note      string
	query     string
	now       time.Time
	workspace string
	// have are the layers the session keeps; memoryEpoch is the session's
	// epoch of its session-memory layer.
	have        promptLayers
	memoryEpoch uint64
}

// promptKey says what the fixed layers of a system prompt were rendered
// for: their templates read the agent, the turn and the date, and the note
// follows an agent switch.
type promptKey struct {
	agent *agent
	turn  int
	date  string
	note  string
}

// promptLayers are the rendered layers of a session's system prompt,
// which the session keeps between model calls: the fixed layers until
// their key changes, the session-memory snapshot until a turn starts or a
// tool that may write has run (memoryEpoch says which), and the retrieved
// knowledge for the turn's last user message.
type promptLayers struct {
	key   promptKey
	fixed string // base, agent, environment and agent-note layers

	memory      string
	memoryEpoch uint64

	knowledge     string
	knowledgeTurn int

	// Each layer above is valid only when its flag is set. The flags sit
	// together so that every session's actor is a few words smaller.
	fixOK, memoryOK, knowledgeOK bool
}

// SkillsLayer is the layer of the system prompt that lists the skills an
// agent may load (see package toolsys/skills, whose Catalog.Prompt writes
// it). The zero value adds no layer.
type SkillsLayer struct {
	// Prompt is the layer's text, used as is (it is not a template). It
	// follows the environment layer. Empty means no layer.
	Prompt string
	// Tool is the name of the tool that loads a skill ("load_skill"): an
	// agent whose tool list does not admit it gets no layer. Empty means
	// every agent gets it.
	Tool string
}

// systemPrompt layers the system prompt of one model call: base, agent,
// environment (Config.EnvironmentPrompt), skills (Config.Skills), the
// agent-switch note, the
// session-memory snapshot and the retrieved knowledge, each taken from
// in.have when it is still valid. Empty layers are left out. It returns
// the layers it used, for the session to keep.
func (rt *Runtime) systemPrompt(ctx context.Context, in promptInput) (string, promptLayers, error) {
	l := in.have
	key := promptKey{agent: in.agent, turn: in.turn, date: in.now.UTC().Format("2006-01-02"), note: in.note}
	if !l.fixOK || l.key != key {
		fixed, err := rt.fixedLayers(in, key.date)
		if err != nil {
			return "", l, err
		}
		l.key, l.fixed, l.fixOK = key, fixed, true
	}
	if rt.sessionMemory != nil && !l.memoryOK {
		snap, err := rt.sessionMemory.Snapshot(ctx, in.session)
		if err != nil {
			return "", l, fmt.Errorf("prompt: session memory: %w", err)
		}
		l.memory, l.memoryEpoch, l.memoryOK = snap, in.memoryEpoch, true
	}
	if in.agent.Retrieve && rt.cfg.Knowledge != nil && strings.TrimSpace(in.query) != "" && (!l.knowledgeOK || l.knowledgeTurn != in.turn) {
		passages, err := rt.retrieve(ctx, in.query, retrieveLayerLimit)
		if err != nil {
			return "", l, fmt.Errorf("prompt: knowledge: %w", err)
		}
		l.knowledge, l.knowledgeTurn, l.knowledgeOK = renderPassages(passages), in.turn, true
	}
	return joinLayers(l.fixed, l.memory, l.knowledge), l, nil
}

// fixedLayers renders the base, agent, environment, skills and agent-note
// layers.
func (rt *Runtime) fixedLayers(in promptInput, date string) (string, error) {
	var data map[string]any // built for the first template that reads it
	layers := make([]string, 0, 6)
	for _, t := range []promptTemplate{rt.base, in.agent.tmpl} {
		if t.static {
			layers = append(layers, t.text)
			continue
		}
		if data == nil {
			data = make(map[string]any, len(rt.cfg.PromptVars)+len(in.agent.Vars)+5)
			maps.Copy(data, rt.cfg.PromptVars)
			maps.Copy(data, in.agent.Vars)
			data["Session"] = in.session
			data["Agent"] = in.agent.Name
			data["Turn"] = in.turn
			data["Date"] = date
			data["Workspace"] = in.workspace
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return "", fmt.Errorf("prompt %q: %w", t.Name(), err)
		}
		layers = append(layers, b.String())
	}
	if rt.cfg.EnvironmentPrompt {
		env := fmt.Sprintf("<environment>\nsession: %s\nagent: %s\ndate: %s\n", in.session, in.agent.Name, date)
		if in.workspace != "" {
			env += "workspace: " + in.workspace + "\n"
		}
		layers = append(layers, env+"</environment>")
	}
	if sk := rt.cfg.Skills; sk.Prompt != "" && (sk.Tool == "" || in.agent.allows(sk.Tool)) {
		layers = append(layers, sk.Prompt)
	}
	if in.note != "" {
		layers = append(layers, "<agent-note>\n"+in.note+"\n</agent-note>")
	}
	return joinLayers(layers...), nil
}

// promptTemplate is a compiled prompt template, with the text it renders
// whatever its data when it holds nothing but text (no action, variable or
// template call): such a template is not executed on every model call.
type promptTemplate struct {
	*template.Template
	text   string
	static bool
}

// newPromptTemplate wraps t, finding out whether it is plain text.
func newPromptTemplate(t *template.Template) promptTemplate {
	pt := promptTemplate{Template: t}
	if t.Tree == nil || t.Tree.Root == nil {
		return pt
	}
	var b strings.Builder
	for _, n := range t.Tree.Root.Nodes {
		tn, ok := n.(*parse.TextNode)
		if !ok {
			return pt
		}
		b.Write(tn.Text)
	}
	pt.text, pt.static = b.String(), true
	return pt
}

// joinLayers joins the layers that are not blank, with a blank line
// between them.
func joinLayers(layers ...string) string {
	layers = slices.DeleteFunc(layers, func(s string) bool { return strings.TrimSpace(s) == "" })
	return strings.Join(layers, "\n\n")
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
