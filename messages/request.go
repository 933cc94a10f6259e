package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ToolDefinition describes a tool to the model. Parameters is a JSON Schema
// object (already normalised by the tool system).
type ToolDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	// Strict asks the provider to enforce the schema exactly (OpenAI strict mode).
	Strict bool `json:"strict,omitempty"`
}

// ToolChoiceMode says whether and how the model must call tools.
type ToolChoiceMode string

// The tool choice modes.
const (
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceAuto     ToolChoiceMode = "auto"
	ToolChoiceRequired ToolChoiceMode = "required"
	// ToolChoiceFunction forces the call of the tool named in ToolChoice.Name.
	ToolChoiceFunction ToolChoiceMode = "function"
)

// ToolChoice constrains tool calling. On the wire it is "none", "auto",
// "required", or {"type":"function","function":{"name":...}}.
type ToolChoice struct {
	Mode ToolChoiceMode
	// Name is the forced tool when Mode is ToolChoiceFunction.
	Name string
}

type namedToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// MarshalJSON implements json.Marshaler.
func (tc ToolChoice) MarshalJSON() ([]byte, error) {
	switch tc.Mode {
	case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
		return json.Marshal(string(tc.Mode))
	case ToolChoiceFunction:
		if tc.Name == "" {
			return nil, fmt.Errorf("tool choice: mode function needs a tool name")
		}
		var n namedToolChoice
		n.Type = "function"
		n.Function.Name = tc.Name
		return json.Marshal(n)
	default:
		return nil, fmt.Errorf("tool choice: unknown mode %q", tc.Mode)
	}
}

// UnmarshalJSON implements json.Unmarshaler.
func (tc *ToolChoice) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("tool choice: %w", err)
		}
		switch m := ToolChoiceMode(s); m {
		case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
			*tc = ToolChoice{Mode: m}
			return nil
		}
		return fmt.Errorf("tool choice: unknown mode %q (want none, auto, required or a named function)", s)
	}
	var n namedToolChoice
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("tool choice: %w", err)
	}
	if n.Type != "function" || n.Function.Name == "" {
		return fmt.Errorf("tool choice: an object must be {\"type\":\"function\",\"function\":{\"name\":...}}")
	}
	*tc = ToolChoice{Mode: ToolChoiceFunction, Name: n.Function.Name}
	return nil
}

// ResponseFormatType is the shape the reply must take.
type ResponseFormatType string

// The response formats.
const (
	ResponseText       ResponseFormatType = "text"
	ResponseJSONObject ResponseFormatType = "json_object"
	ResponseJSONSchema ResponseFormatType = "json_schema"
)

// ResponseFormat asks for plain text, any JSON object, or JSON matching a
// schema (optionally strict).
type ResponseFormat struct {
	Type ResponseFormatType `json:"type"`
	// Name, Schema and Strict apply to ResponseJSONSchema.
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
}

// Request is one call to a model. Zero-valued optional fields are not sent.
type Request struct {
	// Model is the model name; empty means the provider's default model.
	Model    string           `json:"model,omitempty"`
	Messages []Message        `json:"messages"`
	Tools    []ToolDefinition `json:"tools,omitempty"`
	// ToolChoice is sent only when set and only when Tools is not empty.
	ToolChoice        *ToolChoice     `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	ResponseFormat    *ResponseFormat `json:"response_format,omitempty"`
	Temperature       *float64        `json:"temperature,omitempty"`
	TopP              *float64        `json:"top_p,omitempty"`
	// MaxTokens caps the completion; zero means the provider's default.
	MaxTokens int      `json:"max_tokens,omitempty"`
	Stop      []string `json:"stop,omitempty"`
	Seed      *int64   `json:"seed,omitempty"`
	// ReasoningEffort is "low", "medium" or "high" for reasoning models.
	ReasoningEffort string            `json:"reasoning_effort,omitempty"`
	User            string            `json:"user,omitempty"`
	Metadata        map[string]string `json:"metadata,omitempty"`
}

// Response is a model's complete reply.
type Response struct {
	ID           string       `json:"id,omitempty"`
	Model        string       `json:"model,omitempty"`
	Message      Message      `json:"message"`
	FinishReason FinishReason `json:"finish_reason,omitempty"`
	Usage        Usage        `json:"usage"`
}
