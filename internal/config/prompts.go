package config

import (
	"errors"
	"fmt"

	"github.com/agcore/agcore/actors"
)

// prompts loads the template folders of prompt_dirs into a registry; nil
// when there are none. The error names the folder.
func (c *Config) prompts() (*actors.Prompts, int, error) {
	if len(c.PromptDirs) == 0 {
		return nil, -1, nil
	}
	p := actors.NewPrompts()
	for i, dir := range c.PromptDirs {
		if err := p.LoadDir(dir); err != nil {
			return nil, i, err
		}
	}
	return p, -1, nil
}

// validatePrompts loads prompt_dirs and checks base_prompt and every
// agent's prompt against them: a template they name must be there.
func (c *Config) validatePrompts(ps *problems) {
	p, bad, err := c.prompts()
	if err != nil {
		ps.add(fmt.Sprintf("prompt_dirs[%d]", bad), "%v", err)
		return
	}
	if err := p.Check(c.BasePrompt); err != nil {
		ps.add("base_prompt", "%v", err)
	}
	for i, a := range c.Agents {
		// validateAgents reports the prompts that do not parse.
		if err := p.Check(a.Prompt); errors.Is(err, actors.ErrUnknownPrompt) {
			ps.add(fmt.Sprintf("agents[%d].prompt", i), "%v", err)
		}
	}
}
