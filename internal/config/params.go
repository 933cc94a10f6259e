package config

import (
	"encoding/json"
	"errors"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
)

// Params are the request parameters of an agent's model calls. Omitted
// keys are not sent: the provider's defaults apply.
type Params struct {
	// Temperature is the sampling temperature, from 0 to 2.
	Temperature *float64 `yaml:"temperature"`
	// TopP is the nucleus sampling mass, above 0 and at most 1.
	TopP *float64 `yaml:"top_p"`
	// MaxTokens caps each reply's completion tokens. Zero means the
	// provider's default.
	MaxTokens int `yaml:"max_tokens"`
	// ToolChoice is none, auto, required, or the name of the one tool the
	// model must call. Empty means the provider's default (auto).
	ToolChoice string `yaml:"tool_choice"`
	// ParallelToolCalls allows (true) or forbids (false) several calls in
	// one reply. Omitted means the provider's default.
	ParallelToolCalls *bool `yaml:"parallel_tool_calls"`
	// ResponseFormat asks for text, any JSON object, or JSON matching a
	// schema. Omitted means text.
	ResponseFormat *ResponseFormat `yaml:"response_format"`
	// Seed asks for reproducible sampling.
	Seed *int64 `yaml:"seed"`
	// Stop are sequences that end a reply.
	Stop []string `yaml:"stop"`
	// ReasoningEffort is minimal, low, medium or high, for reasoning
	// models. Empty means the provider's default.
	ReasoningEffort string `yaml:"reasoning_effort"`
	// User identifies the end user to the provider.
	User string `yaml:"user"`
	// Metadata are key-value pairs stored with the request by providers
	// that keep them.
	Metadata map[string]string `yaml:"metadata"`
}

// ResponseFormat is the shape replies must take.
type ResponseFormat struct {
	// Type is text, json_object or json_schema. Required.
	Type string `yaml:"type"`
	// Name names the schema (json_schema only; required there).
	Name string `yaml:"name"`
	// Schema is the JSON Schema, written in YAML (json_schema only;
	// required there).
	Schema map[string]any `yaml:"schema"`
	// Strict asks the model to follow the schema exactly (json_schema
	// only).
	Strict bool `yaml:"strict"`
}

// actors converts p. The error is a *actors.ParamError naming the key.
func (p Params) actors() (actors.RequestParams, error) {
	out := actors.RequestParams{Temperature: p.Temperature, TopP: p.TopP, MaxTokens: p.MaxTokens,
		ParallelToolCalls: p.ParallelToolCalls, Seed: p.Seed, Stop: p.Stop, ReasoningEffort: p.ReasoningEffort,
		User: p.User, Metadata: p.Metadata}
	switch m := messages.ToolChoiceMode(p.ToolChoice); m {
	case "":
	case messages.ToolChoiceNone, messages.ToolChoiceAuto, messages.ToolChoiceRequired:
		out.ToolChoice = &messages.ToolChoice{Mode: m}
	default:
		out.ToolChoice = &messages.ToolChoice{Mode: messages.ToolChoiceFunction, Name: p.ToolChoice}
	}
	if rf := p.ResponseFormat; rf != nil {
		f := &messages.ResponseFormat{Type: messages.ResponseFormatType(rf.Type), Name: rf.Name, Strict: rf.Strict}
		if rf.Schema != nil {
			schema, err := json.Marshal(rf.Schema)
			if err != nil {
				return out, &actors.ParamError{Field: "response_format.schema", Msg: "not expressible as JSON: " + err.Error()}
			}
			f.Schema = schema
		}
		out.ResponseFormat = f
	}
	return out, out.Validate()
}

// validateParams checks an agent's params at key.
func validateParams(ps *problems, key string, p Params) {
	if _, err := p.actors(); err != nil {
		if pe, ok := errors.AsType[*actors.ParamError](err); ok {
			ps.add(key+"."+pe.Field, "%s", pe.Msg)
			return
		}
		ps.add(key, "%v", err)
	}
}
