package openai

import (
	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// fromResponse maps a complete reply: its first choice (an empty assistant
// message when there is none), that choice's finish reason and the usage.
// A null or missing content is an empty message, not an error.
func fromResponse(r oai.ChatCompletionResponse) *messages.Response {
	out := &messages.Response{
		ID:      r.ID,
		Model:   r.Model,
		Message: messages.Message{Role: messages.RoleAssistant},
		Usage:   fromUsage(r.Usage),
	}
	if len(r.Choices) == 0 {
		return out
	}
	c := r.Choices[0]
	m := c.Message
	out.FinishReason = finishReason(c.FinishReason)
	out.Message.Name = m.Name
	out.Message.Refusal = m.Refusal
	switch {
	case len(m.MultiContent) > 0:
		out.Message.Content = make(messages.Content, 0, len(m.MultiContent))
		for _, p := range m.MultiContent {
			switch {
			case p.Type == oai.ChatMessagePartTypeImageURL && p.ImageURL != nil:
				out.Message.Content = append(out.Message.Content,
					messages.ImagePart(p.ImageURL.URL, messages.ImageDetail(p.ImageURL.Detail)))
			default:
				out.Message.Content = append(out.Message.Content, messages.TextPart(p.Text))
			}
		}
	default:
		out.Message.Content = messages.Text(m.Content)
	}
	if len(m.ToolCalls) > 0 {
		out.Message.ToolCalls = make([]messages.ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			out.Message.ToolCalls[i] = messages.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		}
	}
	return out
}

// fromUsage maps OpenAI's usage, cached prompt and reasoning tokens
// included.
func fromUsage(u oai.Usage) messages.Usage {
	out := messages.Usage{
		PromptTokens:     int64(u.PromptTokens),
		CompletionTokens: int64(u.CompletionTokens),
		TotalTokens:      int64(u.TotalTokens),
	}
	if d := u.PromptTokensDetails; d != nil {
		out.CachedPromptTokens = int64(d.CachedTokens)
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = int64(d.ReasoningTokens)
	}
	return out
}

// fromStreamChunk maps one streamed chunk. Only the first choice is read
// (agcore never asks for more than one). A tool-call fragment without an
// index takes its position in the chunk.
func fromStreamChunk(r *wireChunk) providers.Chunk {
	c := providers.Chunk{ID: r.ID, Model: r.Model}
	if r.Usage != nil {
		u := fromUsage(*r.Usage)
		c.Usage = &u
	}
	for _, ch := range r.Choices {
		if ch.Index != 0 {
			continue
		}
		c.Text += ch.Delta.Content
		for i, tc := range ch.Delta.ToolCalls {
			idx := i
			if tc.Index != nil {
				idx = *tc.Index
			}
			c.ToolCalls = append(c.ToolCalls, providers.ToolCallDelta{
				Index: idx, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments,
			})
		}
		if fr := finishReason(ch.FinishReason); fr != "" {
			c.FinishReason = fr
		}
	}
	return c
}

// meaningful reports whether c carries something beyond its ids.
func meaningful(c providers.Chunk) bool {
	return c.Text != "" || len(c.ToolCalls) > 0 || c.FinishReason != "" || c.Usage != nil
}

// finishReason maps OpenAI's finish reason; go-openai's "null" (a reply
// still in progress) is no reason.
func finishReason(r oai.FinishReason) messages.FinishReason {
	if r == oai.FinishReasonNull {
		return ""
	}
	return messages.ParseFinishReason(string(r))
}
