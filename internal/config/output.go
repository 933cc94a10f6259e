package config

import (
	"github.com/agcore/agcore/messages"
)

// validateStructuredOutput checks a structured_output key; empty is valid.
func validateStructuredOutput(ps *problems, key, mode string) {
	switch messages.OutputMode(mode) {
	case "", messages.OutputJSONSchema, messages.OutputAnswerTool:
	default:
		ps.add(key, "unknown mode %q (want %s or %s)", mode, messages.OutputJSONSchema, messages.OutputAnswerTool)
	}
}

// structuredOutput returns the providers' structured_output settings by
// provider name, nil when none sets one.
func (c *Config) structuredOutput() map[string]messages.OutputMode {
	var out map[string]messages.OutputMode
	for _, p := range c.Providers {
		if p.StructuredOutput == "" {
			continue
		}
		if out == nil {
			out = map[string]messages.OutputMode{}
		}
		out[p.Name] = messages.OutputMode(p.StructuredOutput)
	}
	return out
}

// outputMode is the agent's structured_output as the runtime takes it.
func (a Agent) outputMode() messages.OutputMode { return messages.OutputMode(a.StructuredOutput) }
