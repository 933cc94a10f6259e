package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Role says who wrote a message.
type Role string

// The roles of a chat.
const (
	RoleSystem    Role = "system"
	RoleDeveloper Role = "developer"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleDeveloper, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// PartType names the kind of a content part.
type PartType string

// The kinds of content part.
const (
	PartText       PartType = "text"
	PartImageURL   PartType = "image_url"
	PartInputAudio PartType = "input_audio"
	PartFile       PartType = "file"
)

// ImageDetail is the resolution hint of an image part.
type ImageDetail string

// The image detail levels.
const (
	ImageDetailAuto ImageDetail = "auto"
	ImageDetailLow  ImageDetail = "low"
	ImageDetailHigh ImageDetail = "high"
)

// ImageURL is an image given by URL (https or a data: URL).
type ImageURL struct {
	URL    string      `json:"url"`
	Detail ImageDetail `json:"detail,omitempty"`
}

// InputAudio is base64 audio data and its format (wav, mp3, ...).
type InputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

// File is a file attached to a message, inline (base64 FileData) or by id.
type File struct {
	FileData string `json:"file_data,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// Part is one piece of message content. Exactly the field that matches Type
// is set.
type Part struct {
	Type       PartType    `json:"type"`
	Text       string      `json:"text,omitempty"`
	ImageURL   *ImageURL   `json:"image_url,omitempty"`
	InputAudio *InputAudio `json:"input_audio,omitempty"`
	File       *File       `json:"file,omitempty"`
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Type: PartText, Text: s} }

// ImagePart returns an image part for url with the given detail ("" = auto).
func ImagePart(url string, detail ImageDetail) Part {
	return Part{Type: PartImageURL, ImageURL: &ImageURL{URL: url, Detail: detail}}
}

// Content is the body of a message: a sequence of parts. It marshals as a
// bare JSON string when it is exactly one text part, as an array otherwise,
// and as null when empty. It decodes from a string, an array or null.
type Content []Part

// Text returns a Content holding one text part, or nil for "".
func Text(s string) Content {
	if s == "" {
		return nil
	}
	return Content{TextPart(s)}
}

// Text concatenates the text parts of c.
func (c Content) Text() string {
	if len(c) == 1 {
		return c[0].Text
	}
	var b strings.Builder
	for _, p := range c {
		if p.Type == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// MarshalJSON implements json.Marshaler.
func (c Content) MarshalJSON() ([]byte, error) {
	switch {
	case len(c) == 0:
		return []byte("null"), nil
	case len(c) == 1 && c[0].Type == PartText:
		return json.Marshal(c[0].Text)
	default:
		return json.Marshal([]Part(c))
	}
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *Content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*c = nil
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("content: %w", err)
		}
		*c = Text(s)
		return nil
	case b[0] == '[':
		var parts []Part
		if err := json.Unmarshal(b, &parts); err != nil {
			return fmt.Errorf("content: %w", err)
		}
		*c = parts
		return nil
	default:
		return fmt.Errorf("content: must be a string, an array of parts or null, got %.20s", b)
	}
}

// ToolCall is a call the model asks for. Arguments is the raw JSON text the
// model wrote; it may be malformed, and is parsed only by the tool system.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one entry of a conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
	// Name optionally tells participants of the same role apart.
	Name string `json:"name,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID ties a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Refusal is an assistant's refusal text, when the model refused.
	Refusal string `json:"refusal,omitempty"`
}

// Text returns the concatenated text of the message's content.
func (m Message) Text() string { return m.Content.Text() }

// SystemText returns a system message.
func SystemText(s string) Message { return Message{Role: RoleSystem, Content: Text(s)} }

// DeveloperText returns a developer message.
func DeveloperText(s string) Message { return Message{Role: RoleDeveloper, Content: Text(s)} }

// UserText returns a user message.
func UserText(s string) Message { return Message{Role: RoleUser, Content: Text(s)} }

// AssistantText returns an assistant message without tool calls.
func AssistantText(s string) Message { return Message{Role: RoleAssistant, Content: Text(s)} }

// ToolResultMessage returns the tool message answering call id.
func ToolResultMessage(callID, content string) Message {
	return Message{Role: RoleTool, Content: Text(content), ToolCallID: callID}
}

// Usage counts the tokens of one or more model calls.
type Usage struct {
	PromptTokens       int64 `json:"prompt_tokens"`
	CompletionTokens   int64 `json:"completion_tokens"`
	TotalTokens        int64 `json:"total_tokens"`
	CachedPromptTokens int64 `json:"cached_prompt_tokens,omitempty"`
	ReasoningTokens    int64 `json:"reasoning_tokens,omitempty"`
}

// Add returns u plus v, field by field.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:       u.PromptTokens + v.PromptTokens,
		CompletionTokens:   u.CompletionTokens + v.CompletionTokens,
		TotalTokens:        u.TotalTokens + v.TotalTokens,
		CachedPromptTokens: u.CachedPromptTokens + v.CachedPromptTokens,
		ReasoningTokens:    u.ReasoningTokens + v.ReasoningTokens,
	}
}

// IsZero reports whether u counts nothing.
func (u Usage) IsZero() bool { return u == Usage{} }

// FinishReason says why the model stopped.
type FinishReason string

// The finish reasons. Any string the provider sends that is not one of the
// first four decodes to FinishOther.
const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishContentFilter FinishReason = "content_filter"
	FinishOther         FinishReason = "other"
)

// ParseFinishReason maps a provider's string onto a FinishReason. The empty
// string stays empty (no reason yet); unknown strings become FinishOther.
func ParseFinishReason(s string) FinishReason {
	switch FinishReason(s) {
	case "", FinishStop, FinishLength, FinishToolCalls, FinishContentFilter, FinishOther:
		return FinishReason(s)
	case "function_call":
		return FinishToolCalls
	}
	return FinishOther
}

// UnmarshalJSON implements json.Unmarshaler; unknown values decode to
// FinishOther without failing.
func (f *FinishReason) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*f = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("finish reason: %w", err)
	}
	*f = ParseFinishReason(s)
	return nil
}
