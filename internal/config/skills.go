package config

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/skills"
)

// Skills configures agent skills: a folder of sub-folders, each holding a
// SKILL.md (YAML front matter with name and description, then Markdown
// instructions) and the files the skill uses.
type Skills struct {
	// Dir is the folder of skills; it must exist. Empty (the default)
	// means no skills: no load_skill tool and no skills layer in the
	// prompt.
	Dir string `yaml:"dir"`
}

// loadSkills loads the skills folder when one is configured: it registers
// load_skill, wraps read_file so that it reads the skills' files (through
// a root on each skill folder, read-only), and gives the runtime the
// skills layer of the prompt. A SKILL.md that does not parse is left out,
// logged and listed in b.Skills.Refused; the other skills load.
func (b *Built) loadSkills(c *Config, opts BuildOptions) error {
	if c.Skills.Dir == "" {
		return nil
	}
	log := opts.Logger.With().Str("component", "skills").Logger()
	if opts.ToolsOnly {
		log = zerolog.Nop() // the caller reports b.Skills.Refused
	}
	cat, err := skills.Load(skills.Config{Dir: c.Skills.Dir, Logger: log})
	if err != nil {
		return fmt.Errorf("config: skills.dir: %w", err)
	}
	b.closers = append(b.closers, cat.Close)
	b.Skills = cat
	if err := b.Tools.Register(cat.Tool(), toolsys.WithSource(toolsys.SourceBuiltin), toolsys.WithCategory("skills"),
		toolsys.WithTags("builtin", "skills")); err != nil {
		return fmt.Errorf("config: tool %s: %w", skills.LoadSkillName, err)
	}
	if read, ok := b.Tools.Unregister("read_file"); ok {
		if err := b.Tools.Register(cat.ReadFile(read), toolsys.WithSource(toolsys.SourceBuiltin), toolsys.WithCategory("files"),
			toolsys.WithTags("builtin", "files")); err != nil {
			return fmt.Errorf("config: tool read_file: %w", err)
		}
	}
	b.Runtime.Skills = actors.SkillsLayer{Prompt: cat.Prompt(), Tool: skills.LoadSkillName}
	return nil
}
