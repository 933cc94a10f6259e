package scripted

import (
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"unicode/utf8"

	"github.com/agcore/agcore/messages"
)

// EstimateTokens estimates the tokens of s at four characters per token,
// rounded up.
func EstimateTokens(s string) int64 {
	return int64(utf8.RuneCountInString(s)+3) / 4
}

// estimateUsage estimates the usage of answering req with msg. Each side
// counts at least one token.
func estimateUsage(req messages.Request, msg messages.Message) messages.Usage {
	var prompt int64
	for _, m := range req.Messages {
		prompt += messageTokens(m)
	}
	for _, t := range req.Tools {
		prompt += EstimateTokens(t.Name) + EstimateTokens(t.Description) + EstimateTokens(string(t.Parameters))
	}
	prompt = max(prompt, 1)
	completion := max(messageTokens(msg), 1)
	return messages.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

func messageTokens(m messages.Message) int64 {
	n := EstimateTokens(m.Text())
	for _, c := range m.ToolCalls {
		n += EstimateTokens(c.Name) + EstimateTokens(c.Arguments)
	}
	return n
}

// responseID derives a response id from the conversation, so that the same
// request always gets the same id.
func responseID(req messages.Request) string {
	h := fnv.New64a()
	field := func(s string) {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	field(req.Model)
	for _, m := range req.Messages {
		field(string(m.Role))
		field(m.Text())
		field(m.ToolCallID)
		for _, c := range m.ToolCalls {
			field(c.ID)
			field(c.Name)
			field(c.Arguments)
		}
	}
	return "chatcmpl-scripted-" + hex.EncodeToString(binary.BigEndian.AppendUint64(nil, h.Sum64()))
}
