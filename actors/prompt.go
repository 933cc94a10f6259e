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
	"time"

	"github.com/agcore/agcore/messages"
)

// retrieveLayerLimit is the number of passages the prompt's knowledge
// layer holds.
const retrieveLayerLimit = 3

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
