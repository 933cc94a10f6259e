package openai

import (
	"encoding/json"
	"errors"
	"fmt"

	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/messages"
)

// toRequest maps req onto a go-openai request, as the provider did before
// it wrote its requests itself: the tests encode its result with
// encoding/json, as go-openai's client does, and compare the bytes with
// appendRequest's. model is the model to use when req names none.
func toRequest(req messages.Request, model string, stream bool) (oai.ChatCompletionRequest, error) {
	out := oai.ChatCompletionRequest{
		Model:           req.Model,
		Stop:            req.Stop,
		ReasoningEffort: req.ReasoningEffort,
		User:            req.User,
		Metadata:        req.Metadata,
		MaxTokens:       req.MaxTokens,
	}
	if out.Model == "" {
		out.Model = model
	}
	if out.Model == "" {
		return out, errors.New("no model: the request names none and Options.Model is empty")
	}
	out.Messages = make([]oai.ChatCompletionMessage, 0, len(req.Messages))
	for i, m := range req.Messages {
		om, err := toMessage(m)
		if err != nil {
			return out, fmt.Errorf("message %d: %w", i, err)
		}
		out.Messages = append(out.Messages, om)
	}
	if len(req.Tools) > 0 {
		out.Tools = make([]oai.Tool, len(req.Tools))
		for i, t := range req.Tools {
			params := t.Parameters
			if len(params) == 0 {
				params = json.RawMessage(emptyParameters)
			}
			out.Tools[i] = oai.Tool{Type: oai.ToolTypeFunction, Function: &oai.FunctionDefinition{
				Name: t.Name, Description: t.Description, Strict: t.Strict, Parameters: params,
			}}
		}
		// tool_choice and parallel_tool_calls are only valid with tools.
		if req.ToolChoice != nil {
			tc, err := toToolChoice(*req.ToolChoice)
			if err != nil {
				return out, err
			}
			out.ToolChoice = tc
		}
		if req.ParallelToolCalls != nil {
			out.ParallelToolCalls = *req.ParallelToolCalls
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		f, err := toResponseFormat(*rf)
		if err != nil {
			return out, err
		}
		out.ResponseFormat = f
	}
	// go-openai omits a zero temperature or top_p; its documented way to send
	// an explicit 0 is the smallest float32, which servers read as 0.
	if t := req.Temperature; t != nil {
		out.Temperature = nonZero(*t)
	}
	if p := req.TopP; p != nil {
		out.TopP = nonZero(*p)
	}
	if s := req.Seed; s != nil {
		seed := int(*s)
		out.Seed = &seed
	}
	if stream {
		out.Stream = true
		out.StreamOptions = &oai.StreamOptions{IncludeUsage: true}
	}
	// Reasoning models take max_completion_tokens instead of max_tokens.
	v := oai.NewReasoningValidator()
	err := v.Validate(out)
	if errors.Is(err, oai.ErrReasoningModelMaxTokensDeprecated) {
		out.MaxCompletionTokens, out.MaxTokens = out.MaxTokens, 0
		err = v.Validate(out)
	}
	if err != nil {
		return out, fmt.Errorf("model %s: %w", out.Model, err)
	}
	return out, nil
}

func toMessage(m messages.Message) (oai.ChatCompletionMessage, error) {
	if !m.Role.Valid() {
		return oai.ChatCompletionMessage{}, fmt.Errorf("unknown role %q", m.Role)
	}
	om := oai.ChatCompletionMessage{
		Role:       string(m.Role),
		Name:       m.Name,
		Refusal:    m.Refusal,
		ToolCallID: m.ToolCallID,
	}
	switch {
	case len(m.Content) == 1 && m.Content[0].Type == messages.PartText:
		om.Content = m.Content[0].Text
	case len(m.Content) > 0:
		om.MultiContent = make([]oai.ChatMessagePart, len(m.Content))
		for j, p := range m.Content {
			switch {
			case p.Type == messages.PartText:
				om.MultiContent[j] = oai.ChatMessagePart{Type: oai.ChatMessagePartTypeText, Text: p.Text}
			case p.Type == messages.PartImageURL && p.ImageURL != nil:
				om.MultiContent[j] = oai.ChatMessagePart{Type: oai.ChatMessagePartTypeImageURL, ImageURL: &oai.ChatMessageImageURL{
					URL: p.ImageURL.URL, Detail: oai.ImageURLDetail(p.ImageURL.Detail),
				}}
			default:
				return om, fmt.Errorf("content part %d: type %q is not supported by this provider", j, p.Type)
			}
		}
	}
	if len(m.ToolCalls) > 0 {
		om.ToolCalls = make([]oai.ToolCall, len(m.ToolCalls))
		for j, c := range m.ToolCalls {
			om.ToolCalls[j] = oai.ToolCall{ID: c.ID, Type: oai.ToolTypeFunction, Function: oai.FunctionCall{
				Name: c.Name, Arguments: c.Arguments,
			}}
		}
	}
	return om, nil
}

func toToolChoice(tc messages.ToolChoice) (any, error) {
	switch tc.Mode {
	case messages.ToolChoiceNone, messages.ToolChoiceAuto, messages.ToolChoiceRequired:
		return string(tc.Mode), nil
	case messages.ToolChoiceFunction:
		if tc.Name == "" {
			return nil, errors.New("tool choice: mode function needs a tool name")
		}
		return oai.ToolChoice{Type: oai.ToolTypeFunction, Function: oai.ToolFunction{Name: tc.Name}}, nil
	}
	return nil, fmt.Errorf("tool choice: unknown mode %q", tc.Mode)
}

func toResponseFormat(rf messages.ResponseFormat) (*oai.ChatCompletionResponseFormat, error) {
	switch rf.Type {
	case messages.ResponseText:
		return &oai.ChatCompletionResponseFormat{Type: oai.ChatCompletionResponseFormatTypeText}, nil
	case messages.ResponseJSONObject:
		return &oai.ChatCompletionResponseFormat{Type: oai.ChatCompletionResponseFormatTypeJSONObject}, nil
	case messages.ResponseJSONSchema:
		s := &oai.ChatCompletionResponseFormatJSONSchema{Name: rf.Name, Strict: rf.Strict}
		if s.Name == "" {
			s.Name = defaultSchemaName
		}
		if len(rf.Schema) > 0 {
			s.Schema = rf.Schema
		}
		return &oai.ChatCompletionResponseFormat{Type: oai.ChatCompletionResponseFormatTypeJSONSchema, JSONSchema: s}, nil
	}
	return nil, fmt.Errorf("response format: unknown type %q", rf.Type)
}
