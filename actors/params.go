package actors

// This file holds RequestParams, the sampling and output parameters of
// model requests, set per agent and per turn.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/agcore/agcore/messages"
)

// RequestParams are the parameters of an agent's model requests beyond
// the conversation and the tools. Zero fields are not sent: the provider's
// defaults apply. An AgentProfile sets them for its turns, and WithParams
// overrides them field by field for one turn.
type RequestParams struct {
	// Temperature is the sampling temperature, from 0 to 2.
	Temperature *float64
	// TopP is the nucleus sampling mass, above 0 and at most 1.
	TopP *float64
	// MaxTokens caps each reply's completion tokens. Zero means the
	// provider's default.
	MaxTokens int
	// ToolChoice says whether and which tools the model must call. It is
	// sent only with requests that offer tools.
	ToolChoice *messages.ToolChoice
	// ParallelToolCalls allows (or forbids) several calls in one reply.
	ParallelToolCalls *bool
	// ResponseFormat asks for plain text, any JSON object, or JSON
	// matching a schema (with Strict, exactly).
	ResponseFormat *messages.ResponseFormat
	// Seed asks for reproducible sampling.
	Seed *int64
	// Stop are sequences that end a reply.
	Stop []string
	// ReasoningEffort is "minimal", "low", "medium" or "high", for
	// reasoning models.
	ReasoningEffort string
	// User identifies the end user to the provider.
	User string
	// Metadata are key-value pairs stored with the request by providers
	// that keep them.
	Metadata map[string]string
}

// ParamError says which request parameter is not valid. Field is its wire
// name ("temperature", "response_format.schema").
type ParamError struct {
	Field string
	Msg   string
}

func (e *ParamError) Error() string { return e.Field + ": " + e.Msg }

func paramErr(field, format string, args ...any) *ParamError {
	return &ParamError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Validate reports the first parameter of p that is not valid, as a
// *ParamError.
func (p RequestParams) Validate() error {
	if t := p.Temperature; t != nil && (*t < 0 || *t > 2) {
		return paramErr("temperature", "must be between 0 and 2, got %g", *t)
	}
	if v := p.TopP; v != nil && (*v <= 0 || *v > 1) {
		return paramErr("top_p", "must be above 0 and at most 1, got %g", *v)
	}
	if p.MaxTokens < 0 {
		return paramErr("max_tokens", "must not be negative, got %d", p.MaxTokens)
	}
	if tc := p.ToolChoice; tc != nil {
		switch tc.Mode {
		case messages.ToolChoiceNone, messages.ToolChoiceAuto, messages.ToolChoiceRequired:
		case messages.ToolChoiceFunction:
			if tc.Name == "" {
				return paramErr("tool_choice", "mode function needs a tool name")
			}
		default:
			return paramErr("tool_choice", "unknown mode %q (want none, auto, required or function)", tc.Mode)
		}
	}
	if rf := p.ResponseFormat; rf != nil {
		if err := validateResponseFormat(*rf); err != nil {
			return err
		}
	}
	for i, s := range p.Stop {
		if s == "" {
			return paramErr(fmt.Sprintf("stop[%d]", i), "empty")
		}
	}
	switch p.ReasoningEffort {
	case "", "minimal", "low", "medium", "high":
	default:
		return paramErr("reasoning_effort", "unknown effort %q (want minimal, low, medium or high)", p.ReasoningEffort)
	}
	if _, ok := p.Metadata[""]; ok {
		return paramErr("metadata", "empty key")
	}
	return nil
}

func validateResponseFormat(rf messages.ResponseFormat) error {
	switch rf.Type {
	case messages.ResponseText, messages.ResponseJSONObject:
		switch {
		case rf.Name != "":
			return paramErr("response_format.name", "only for json_schema")
		case len(rf.Schema) > 0:
			return paramErr("response_format.schema", "only for json_schema")
		case rf.Strict:
			return paramErr("response_format.strict", "only for json_schema")
		}
	case messages.ResponseJSONSchema:
		var obj map[string]any
		switch {
		case rf.Name == "":
			return paramErr("response_format.name", "required for json_schema")
		case len(rf.Schema) == 0:
			return paramErr("response_format.schema", "required for json_schema")
		case json.Unmarshal(rf.Schema, &obj) != nil:
			return paramErr("response_format.schema", "not a JSON object")
		}
	default:
		return paramErr("response_format.type", "unknown type %q (want text, json_object or json_schema)", rf.Type)
	}
	return nil
}

// clone returns a deep copy of p.
func (p RequestParams) clone() RequestParams {
	p.Stop = slices.Clone(p.Stop)
	p.Metadata = maps.Clone(p.Metadata)
	if rf := p.ResponseFormat; rf != nil {
		c := *rf
		c.Schema = slices.Clone(rf.Schema)
		p.ResponseFormat = &c
	}
	return p
}

// merge returns p with the fields o sets.
func (p RequestParams) merge(o RequestParams) RequestParams {
	if o.Temperature != nil {
		p.Temperature = o.Temperature
	}
	if o.TopP != nil {
		p.TopP = o.TopP
	}
	if o.MaxTokens != 0 {
		p.MaxTokens = o.MaxTokens
	}
	if o.ToolChoice != nil {
		p.ToolChoice = o.ToolChoice
	}
	if o.ParallelToolCalls != nil {
		p.ParallelToolCalls = o.ParallelToolCalls
	}
	if o.ResponseFormat != nil {
		p.ResponseFormat = o.ResponseFormat
	}
	if o.Seed != nil {
		p.Seed = o.Seed
	}
	if o.Stop != nil {
		p.Stop = o.Stop
	}
	if o.ReasoningEffort != "" {
		p.ReasoningEffort = o.ReasoningEffort
	}
	if o.User != "" {
		p.User = o.User
	}
	if o.Metadata != nil {
		p.Metadata = o.Metadata
	}
	return p
}

// apply sets p on req.
func (p RequestParams) apply(req *messages.Request) {
	req.Temperature, req.TopP, req.MaxTokens = p.Temperature, p.TopP, p.MaxTokens
	req.ToolChoice, req.ParallelToolCalls, req.ResponseFormat = p.ToolChoice, p.ParallelToolCalls, p.ResponseFormat
	req.Seed, req.Stop, req.ReasoningEffort = p.Seed, p.Stop, p.ReasoningEffort
	req.User, req.Metadata = p.User, p.Metadata
}

// WithParams overrides the agent's request parameters for this turn, field
// by field (see RequestParams): the fields params sets replace the
// agent's. Parameters that are not valid fail the submission with a
// *ParamError before anything is journaled. A turn resumed after a crash
// uses the agent's parameters.
func WithParams(params RequestParams) SubmitOption {
	return func(o *submitOptions) { o.params = params.clone(); o.hasParams = true }
}
