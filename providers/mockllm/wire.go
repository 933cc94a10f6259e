package mockllm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agcore/agcore/messages"
)

// chatRequest is the body of POST /v1/chat/completions, as OpenAI clients
// send it. Fields the server has no use for (logprobs, penalties, ...) are
// accepted and ignored.
type chatRequest struct {
	Model               string               `json:"model"`
	Messages            []wireMessage        `json:"messages"`
	Tools               []wireTool           `json:"tools"`
	ToolChoice          *messages.ToolChoice `json:"tool_choice"`
	ParallelToolCalls   *bool                `json:"parallel_tool_calls"`
	ResponseFormat      *wireResponseFormat  `json:"response_format"`
	Temperature         *float64             `json:"temperature"`
	TopP                *float64             `json:"top_p"`
	MaxTokens           int                  `json:"max_tokens"`
	MaxCompletionTokens int                  `json:"max_completion_tokens"`
	Stop                stopList             `json:"stop"`
	Seed                *int64               `json:"seed"`
	ReasoningEffort     string               `json:"reasoning_effort"`
	User                string               `json:"user"`
	Metadata            map[string]string    `json:"metadata"`
	N                   *int                 `json:"n"`
	Stream              bool                 `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type wireMessage struct {
	Role       messages.Role    `json:"role"`
	Content    messages.Content `json:"content"`
	Name       string           `json:"name,omitempty"`
	ToolCalls  []wireToolCall   `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	Refusal    string           `json:"refusal,omitempty"`
}

// wireToolCall is a tool call in a message, or a fragment of one in a
// stream delta (where Index is set and the other fields only when they
// carry something).
type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
		Strict      bool            `json:"strict,omitempty"`
	} `json:"function"`
}

type wireResponseFormat struct {
	Type       messages.ResponseFormatType `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict bool            `json:"strict"`
	} `json:"json_schema"`
}

// stopList decodes "stop" given as a string or an array of strings.
type stopList []string

func (s *stopList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*s = nil
		return nil
	case len(b) > 0 && b[0] == '"':
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = stopList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("stop must be a string or an array of strings")
	}
	*s = many
	return nil
}

// requestError is a problem with a request body, reported as a 400.
type requestError struct {
	param, msg string
}

func (e *requestError) Error() string {
	if e.param == "" {
		return e.msg
	}
	return e.param + ": " + e.msg
}

// decodeRequest parses and checks a chat completion body.
func decodeRequest(body []byte) (chatRequest, messages.Request, error) {
	var cr chatRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&cr); err != nil {
		return cr, messages.Request{}, &requestError{msg: "invalid JSON body: " + err.Error()}
	}
	if dec.More() {
		return cr, messages.Request{}, &requestError{msg: "invalid JSON body: unexpected data after the request object"}
	}
	if cr.Model == "" {
		return cr, messages.Request{}, &requestError{param: "model", msg: "you must provide a model parameter"}
	}
	if cr.N != nil && *cr.N != 1 {
		return cr, messages.Request{}, &requestError{param: "n", msg: "only n=1 is supported"}
	}
	req := messages.Request{
		Model:             cr.Model,
		ToolChoice:        cr.ToolChoice,
		ParallelToolCalls: cr.ParallelToolCalls,
		Temperature:       cr.Temperature,
		TopP:              cr.TopP,
		MaxTokens:         cr.MaxTokens,
		Stop:              cr.Stop,
		Seed:              cr.Seed,
		ReasoningEffort:   cr.ReasoningEffort,
		User:              cr.User,
		Metadata:          cr.Metadata,
	}
	if cr.MaxCompletionTokens > 0 {
		req.MaxTokens = cr.MaxCompletionTokens
	}
	req.Messages = make([]messages.Message, len(cr.Messages))
	for i, m := range cr.Messages {
		msg := messages.Message{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID, Refusal: m.Refusal}
		for k, c := range m.ToolCalls {
			if c.Type != "" && c.Type != "function" {
				return cr, messages.Request{}, &requestError{param: fmt.Sprintf("messages[%d].tool_calls[%d].type", i, k), msg: fmt.Sprintf("unsupported type %q", c.Type)}
			}
			msg.ToolCalls = append(msg.ToolCalls, messages.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		req.Messages[i] = msg
	}
	if err := messages.Validate(req.Messages); err != nil {
		return cr, messages.Request{}, &requestError{param: "messages", msg: err.Error()}
	}
	for i, t := range cr.Tools {
		if t.Type != "function" {
			return cr, messages.Request{}, &requestError{param: fmt.Sprintf("tools[%d].type", i), msg: fmt.Sprintf("unsupported type %q (want function)", t.Type)}
		}
		if t.Function.Name == "" {
			return cr, messages.Request{}, &requestError{param: fmt.Sprintf("tools[%d].function.name", i), msg: "missing"}
		}
		req.Tools = append(req.Tools, messages.ToolDefinition{
			Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters, Strict: t.Function.Strict,
		})
	}
	if rf := cr.ResponseFormat; rf != nil {
		out := &messages.ResponseFormat{Type: rf.Type}
		switch rf.Type {
		case messages.ResponseText, messages.ResponseJSONObject:
		case messages.ResponseJSONSchema:
			if rf.JSONSchema == nil {
				return cr, messages.Request{}, &requestError{param: "response_format.json_schema", msg: "missing"}
			}
			out.Name, out.Schema, out.Strict = rf.JSONSchema.Name, rf.JSONSchema.Schema, rf.JSONSchema.Strict
		default:
			return cr, messages.Request{}, &requestError{param: "response_format.type", msg: fmt.Sprintf("unsupported type %q", rf.Type)}
		}
		req.ResponseFormat = out
	}
	return cr, req, nil
}

// chatResponse is a non-streamed chat completion.
type chatResponse struct {
	ID      string    `json:"id"`
	Object  string    `json:"object"`
	Created int64     `json:"created"`
	Model   string    `json:"model"`
	Choices []choice  `json:"choices"`
	Usage   wireUsage `json:"usage"`
}

type choice struct {
	Index        int        `json:"index"`
	Message      outMessage `json:"message"`
	FinishReason string     `json:"finish_reason"`
}

type outMessage struct {
	Role      messages.Role  `json:"role"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func usageOf(u messages.Usage) wireUsage {
	w := wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	w.PromptTokensDetails.CachedTokens = u.CachedPromptTokens
	w.CompletionTokensDetails.ReasoningTokens = u.ReasoningTokens
	return w
}

// chunkResponse is one event of a streamed chat completion.
type chunkResponse struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []streamChoice `json:"choices"`
	// Usage is absent unless the client asked for usage; then it is null
	// on every chunk but the last.
	Usage json.RawMessage `json:"usage,omitempty"`
}

type streamChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role      messages.Role  `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}
