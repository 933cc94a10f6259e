package skills

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// LoadSkillName is the name of the tool that loads a skill.
const LoadSkillName = "load_skill"

// LoadSkillParams are load_skill's arguments.
type LoadSkillParams struct {
	Name string `json:"name" jsonschema:"description=Name of the skill to load, as the skills list of the system prompt gives it"`
}

// LoadSkill is the load_skill tool: it returns the body of a skill of the
// catalog, and the absolute paths of its resources, which read_file reads
// (see ReadFile).
type LoadSkill struct {
	c *Catalog
}

var _ toolsys.Typed[LoadSkillParams] = (*LoadSkill)(nil)

// NewLoadSkill returns load_skill over c.
func NewLoadSkill(c *Catalog) *LoadSkill { return &LoadSkill{c: c} }

// Tool returns load_skill bridged into a toolsys.Tool.
func (c *Catalog) Tool() toolsys.Tool { return toolsys.Bridge[LoadSkillParams](NewLoadSkill(c)) }

// Name returns "load_skill".
func (*LoadSkill) Name() string { return LoadSkillName }

// Description tells the model when to call load_skill.
func (*LoadSkill) Description() string {
	return "Load a skill: its instructions for a particular task, and the paths of the files that come with it " +
		"(read them with read_file). The system prompt lists the skills with their descriptions; load one when " +
		"the task matches its description, before you start."
}

// Permission is PermReadOnly.
func (*LoadSkill) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams is nil.
func (*LoadSkill) SecretParams() []string { return nil }

// Idempotent is true: loading reads only.
func (*LoadSkill) Idempotent() bool { return true }

// Execute returns the skill's body in a <skill> block, followed by its
// resources. An unknown name is an error result that lists the skills.
func (t *LoadSkill) Execute(_ context.Context, p LoadSkillParams, _ *toolsys.Context) (toolsys.Result, error) {
	s, ok := t.c.Get(strings.TrimSpace(p.Name))
	if !ok {
		if t.c.Len() == 0 {
			return toolsys.ErrorResult("unknown skill %q: no skills are installed", p.Name), nil
		}
		return toolsys.ErrorResult("unknown skill %q; the skills are: %s", p.Name, strings.Join(t.c.Names(), ", ")), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<skill name=%q>\n%s", s.Name, s.Body)
	if !strings.HasSuffix(s.Body, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("</skill>\n")
	paths := make([]string, len(s.Resources))
	if len(s.Resources) > 0 {
		fmt.Fprintf(&b, "\nFiles of this skill (read them with read_file, by these paths, when its instructions need them):\n")
		for i, r := range s.Resources {
			paths[i] = filepath.Join(s.Dir, filepath.FromSlash(r))
			fmt.Fprintf(&b, "- %s\n", paths[i])
		}
	}
	return toolsys.Result{Content: b.String(), Metadata: map[string]any{"skill": s.Name, "dir": s.Dir, "resources": paths}}, nil
}
