package messages

// This file writes the JSON of the journal events a turn records (the
// user message, the replies, the tool calls and results, the end of the
// turn, the activation) without reflection: NewEnvelope encodes one per
// step of every turn. The bytes are those of json.Marshal; an event this
// file does not write (or content it leaves aside, such as multi-part
// messages, tool metadata and structured answers) goes to encoding/json.

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// appendEventJSON appends the JSON encoding of ev to dst, byte for byte as
// json.Marshal writes it, and reports whether it could; when it reports
// false, dst is returned unchanged and the caller uses json.Marshal.
func appendEventJSON(dst []byte, ev JournalEvent) ([]byte, bool) {
	start := len(dst)
	var ok bool
	switch e := ev.(type) {
	case UserMessage:
		if e.Output != nil {
			return dst, false // a turn with a structured answer: rare
		}
		dst, ok = appendUserMessage(dst, e)
	case AssistantMessage:
		dst, ok = appendAssistantMessage(dst, e)
	case ToolCallStarted:
		dst, ok = appendToolCallStarted(dst, e), true
	case ToolResult:
		dst, ok = appendToolResult(dst, e)
	case TurnCompleted:
		if e.Output != nil || e.OutputFailure != nil {
			return dst, false
		}
		dst, ok = appendTurnCompleted(dst, e)
	case Activated:
		dst, ok = appendActivated(dst, e), true
	}
	if !ok {
		return dst[:start], false
	}
	return dst, true
}

// eventSizeHint is about the length of ev's JSON, for the events
// appendEventJSON writes: what their members' names and numbers take, and
// their text with room for a few escapes.
func eventSizeHint(ev JournalEvent) int {
	n := 0
	switch e := ev.(type) {
	case UserMessage:
		n = 64 + messageSize(e.Message) + len(e.TurnID) + len(e.TraceID) + len(e.SpanID)
	case AssistantMessage:
		n = 192 + messageSize(e.Message) + len(e.Model)
	case ToolCallStarted:
		n = 64 + len(e.CallID) + len(e.Name) + len(e.Arguments)
	case ToolResult:
		n = 80 + len(e.CallID) + len(e.Name) + len(e.Content)
	case TurnCompleted:
		n = 176 + len(e.TurnID) + len(e.Reason)
	case Activated:
		n = 48 + len(e.Node)
	}
	return n + n/16
}

func messageSize(m Message) int {
	n := len(m.Name) + len(m.ToolCallID) + len(m.Refusal)
	for _, p := range m.Content {
		n += len(p.Text)
	}
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments) + 32
	}
	return n
}

func appendActivated(b []byte, e Activated) []byte {
	b = append(b, `{"activation":`...)
	b = strconv.AppendUint(b, e.Activation, 10)
	if e.Node != "" {
		b = append(b, `,"node":`...)
		b = AppendJSONString(b, e.Node)
	}
	return append(b, '}')
}

func appendUserMessage(b []byte, e UserMessage) ([]byte, bool) {
	b = append(b, '{')
	if e.TurnID != "" {
		b = append(b, `"turn_id":`...)
		b = AppendJSONString(b, e.TurnID)
		b = append(b, ',')
	}
	b = append(b, `"turn":`...)
	b = strconv.AppendInt(b, int64(e.Turn), 10)
	b = append(b, `,"message":`...)
	b, ok := appendMessage(b, e.Message)
	if e.TraceID != "" {
		b = append(b, `,"trace_id":`...)
		b = AppendJSONString(b, e.TraceID)
	}
	if e.SpanID != "" {
		b = append(b, `,"span_id":`...)
		b = AppendJSONString(b, e.SpanID)
	}
	return append(b, '}'), ok
}

func appendAssistantMessage(b []byte, e AssistantMessage) ([]byte, bool) {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(e.Turn), 10)
	b = append(b, `,"message":`...)
	b, ok := appendMessage(b, e.Message)
	if !ok {
		return b, false
	}
	if e.FinishReason != "" {
		b = append(b, `,"finish_reason":`...)
		b = AppendJSONString(b, string(e.FinishReason))
	}
	if e.Model != "" {
		b = append(b, `,"model":`...)
		b = AppendJSONString(b, e.Model)
	}
	b = append(b, `,"usage":`...)
	b = appendUsage(b, e.Usage)
	if e.Cost != 0 {
		b = append(b, `,"cost":`...)
		if b, ok = appendFloat(b, e.Cost); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func appendToolCallStarted(b []byte, e ToolCallStarted) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(e.Turn), 10)
	b = append(b, `,"call_id":`...)
	b = AppendJSONString(b, e.CallID)
	b = append(b, `,"name":`...)
	b = AppendJSONString(b, e.Name)
	b = append(b, `,"arguments":`...)
	b = AppendJSONString(b, e.Arguments)
	return append(b, '}')
}

func appendToolResult(b []byte, e ToolResult) ([]byte, bool) {
	if len(e.Metadata) > 0 {
		return b, false
	}
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(e.Turn), 10)
	b = append(b, `,"call_id":`...)
	b = AppendJSONString(b, e.CallID)
	b = append(b, `,"name":`...)
	b = AppendJSONString(b, e.Name)
	b = append(b, `,"content":`...)
	b = AppendJSONString(b, e.Content)
	if e.IsError {
		b = append(b, `,"is_error":true`...)
	}
	if e.Duration != 0 {
		b = append(b, `,"duration_ns":`...)
		b = strconv.AppendInt(b, int64(e.Duration), 10)
	}
	return append(b, '}'), true
}

func appendTurnCompleted(b []byte, e TurnCompleted) ([]byte, bool) {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(e.Turn), 10)
	if e.TurnID != "" {
		b = append(b, `,"turn_id":`...)
		b = AppendJSONString(b, e.TurnID)
	}
	b = append(b, `,"outcome":`...)
	b = AppendJSONString(b, string(e.Outcome))
	if e.FinishReason != "" {
		b = append(b, `,"finish_reason":`...)
		b = AppendJSONString(b, string(e.FinishReason))
	}
	if e.Reason != "" {
		b = append(b, `,"reason":`...)
		b = AppendJSONString(b, e.Reason)
	}
	b = append(b, `,"usage":`...)
	b = appendUsage(b, e.Usage)
	if e.Cost != 0 {
		var ok bool
		b = append(b, `,"cost":`...)
		if b, ok = appendFloat(b, e.Cost); !ok {
			return b, false
		}
	}
	b = append(b, `,"round_trips":`...)
	b = strconv.AppendInt(b, int64(e.RoundTrips), 10)
	return append(b, '}'), true
}

// appendMessage writes m when its content is empty or one text part (as
// Content.MarshalJSON writes it: null, or a string), and reports false for
// any other content.
func appendMessage(b []byte, m Message) ([]byte, bool) {
	b = append(b, `{"role":`...)
	b = AppendJSONString(b, string(m.Role))
	b = append(b, `,"content":`...)
	switch {
	case len(m.Content) == 0:
		b = append(b, "null"...)
	case len(m.Content) == 1 && m.Content[0].Type == PartText:
		b = AppendJSONString(b, m.Content[0].Text)
	default:
		return b, false
	}
	if m.Name != "" {
		b = append(b, `,"name":`...)
		b = AppendJSONString(b, m.Name)
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = AppendJSONString(b, c.ID)
			b = append(b, `,"name":`...)
			b = AppendJSONString(b, c.Name)
			b = append(b, `,"arguments":`...)
			b = AppendJSONString(b, c.Arguments)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = AppendJSONString(b, m.ToolCallID)
	}
	if m.Refusal != "" {
		b = append(b, `,"refusal":`...)
		b = AppendJSONString(b, m.Refusal)
	}
	return append(b, '}'), true
}

func appendUsage(b []byte, u Usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, u.PromptTokens, 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, u.CompletionTokens, 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, u.TotalTokens, 10)
	if u.CachedPromptTokens != 0 {
		b = append(b, `,"cached_prompt_tokens":`...)
		b = strconv.AppendInt(b, u.CachedPromptTokens, 10)
	}
	if u.ReasoningTokens != 0 {
		b = append(b, `,"reasoning_tokens":`...)
		b = strconv.AppendInt(b, u.ReasoningTokens, 10)
	}
	return append(b, '}')
}

// appendFloat writes f as encoding/json writes a float64, and reports
// false for NaN and the infinities, which encoding/json refuses.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s to b as a JSON string, byte for byte as
// encoding/json writes it (with its HTML escaping): '"' and '\\' escaped, the short escapes of \b, \f,
// \n, \r and \t, \u00XX for the other control characters and for <, >
// and &, \ufffd for each byte of invalid UTF-8, and \u2028 and \u2029.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
