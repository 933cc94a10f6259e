package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/messages"
)

// emptyParameters is sent for a tool that declares no parameters; OpenAI
// rejects a function tool whose parameters are null.
var emptyParameters = []byte(`{"type":"object","properties":{}}`)

// defaultSchemaName names a JSON-schema response format that has no name;
// OpenAI requires one.
const defaultSchemaName = "response"

// appendRequest appends the chat completions request body for req to dst.
// model is the model to use when req names none.
//
// The body is byte for byte what go-openai's client sends for the same
// request (its ChatCompletionRequest encoded by encoding/json: the same
// members in the same order, the same omissions, strings with the same
// HTML escaping, numbers written the same way, schemas compacted), so
// endpoints see no difference; it is written without reflection or
// intermediate values. Anything the chat completions API cannot express
// (audio or file parts) is an error, and so are the requests go-openai
// refuses before sending (a reasoning model with max_tokens that cannot
// become max_completion_tokens, a sampling parameter it does not take).
func appendRequest(dst []byte, req messages.Request, model string, stream bool) ([]byte, error) {
	if req.Model != "" {
		model = req.Model
	}
	if model == "" {
		return dst, errors.New("no model: the request names none and Options.Model is empty")
	}
	if err := checkRequest(req); err != nil {
		return dst, err
	}
	maxTokens, maxCompletion, err := tokenLimits(req, model)
	if err != nil {
		return dst, err
	}

	b := append(dst, `{"model":`...)
	b = messages.AppendJSONString(b, model)
	b = append(b, `,"messages":[`...)
	for i := range req.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMessage(b, &req.Messages[i])
	}
	b = append(b, ']')
	if maxTokens != 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(maxTokens), 10)
	}
	if maxCompletion != 0 {
		b = append(b, `,"max_completion_tokens":`...)
		b = strconv.AppendInt(b, int64(maxCompletion), 10)
	}
	if t := req.Temperature; t != nil {
		if b, err = appendFloat32(append(b, `,"temperature":`...), nonZero(*t)); err != nil {
			return dst, fmt.Errorf("temperature: %w", err)
		}
	}
	if p := req.TopP; p != nil {
		if b, err = appendFloat32(append(b, `,"top_p":`...), nonZero(*p)); err != nil {
			return dst, fmt.Errorf("top_p: %w", err)
		}
	}
	if stream {
		b = append(b, `,"stream":true`...)
	} else {
		b = append(b, `,"stream":false`...)
	}
	if len(req.Stop) > 0 {
		b = append(b, `,"stop":[`...)
		for i, s := range req.Stop {
			if i > 0 {
				b = append(b, ',')
			}
			b = messages.AppendJSONString(b, s)
		}
		b = append(b, ']')
	}
	if rf := req.ResponseFormat; rf != nil {
		if b, err = appendResponseFormat(append(b, `,"response_format":`...), rf); err != nil {
			return dst, err
		}
	}
	if s := req.Seed; s != nil {
		b = append(b, `,"seed":`...)
		// go-openai holds the seed in an int.
		b = strconv.AppendInt(b, int64(int(*s)), 10)
	}
	if req.User != "" {
		b = append(b, `,"user":`...)
		b = messages.AppendJSONString(b, req.User)
	}
	if len(req.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i := range req.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendTool(b, &req.Tools[i]); err != nil {
				return dst, err
			}
		}
		b = append(b, ']')
		// tool_choice and parallel_tool_calls are only valid with tools.
		if tc := req.ToolChoice; tc != nil {
			b = append(b, `,"tool_choice":`...)
			if tc.Mode == messages.ToolChoiceFunction {
				b = append(b, `{"type":"function","function":{"name":`...)
				b = messages.AppendJSONString(b, tc.Name)
				b = append(b, `}}`...)
			} else {
				b = messages.AppendJSONString(b, string(tc.Mode))
			}
		}
	}
	if stream {
		b = append(b, `,"stream_options":{"include_usage":true}`...)
	}
	if len(req.Tools) > 0 && req.ParallelToolCalls != nil {
		b = strconv.AppendBool(append(b, `,"parallel_tool_calls":`...), *req.ParallelToolCalls)
	}
	if req.ReasoningEffort != "" {
		b = append(b, `,"reasoning_effort":`...)
		b = messages.AppendJSONString(b, req.ReasoningEffort)
	}
	if len(req.Metadata) > 0 {
		b = append(b, `,"metadata":{`...)
		for i, k := range slices.Sorted(maps.Keys(req.Metadata)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(messages.AppendJSONString(b, k), ':')
			b = messages.AppendJSONString(b, req.Metadata[k])
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// checkRequest finds what the request cannot say, in the order the
// members are mapped: each message's role and parts, then the tool choice
// (only read when there are tools), then the response format.
func checkRequest(req messages.Request) error {
	for i := range req.Messages {
		m := &req.Messages[i]
		if !m.Role.Valid() {
			return fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		if len(m.Content) == 1 && m.Content[0].Type == messages.PartText {
			continue
		}
		for j, p := range m.Content {
			if p.Type != messages.PartText && (p.Type != messages.PartImageURL || p.ImageURL == nil) {
				return fmt.Errorf("message %d: content part %d: type %q is not supported by this provider", i, j, p.Type)
			}
		}
	}
	if tc := req.ToolChoice; tc != nil && len(req.Tools) > 0 {
		switch tc.Mode {
		case messages.ToolChoiceNone, messages.ToolChoiceAuto, messages.ToolChoiceRequired:
		case messages.ToolChoiceFunction:
			if tc.Name == "" {
				return errors.New("tool choice: mode function needs a tool name")
			}
		default:
			return fmt.Errorf("tool choice: unknown mode %q", tc.Mode)
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case messages.ResponseText, messages.ResponseJSONObject, messages.ResponseJSONSchema:
		default:
			return fmt.Errorf("response format: unknown type %q", rf.Type)
		}
	}
	return nil
}

// tokenLimits returns the max_tokens and max_completion_tokens to send,
// after go-openai's checks of reasoning models: those take
// max_completion_tokens instead of max_tokens, and refuse some sampling
// parameters. Only the members go-openai's validator reads are given to
// it.
func tokenLimits(req messages.Request, model string) (maxTokens, maxCompletion int, err error) {
	probe := oai.ChatCompletionRequest{Model: model, MaxTokens: req.MaxTokens, ReasoningEffort: req.ReasoningEffort}
	if t := req.Temperature; t != nil {
		probe.Temperature = nonZero(*t)
	}
	if p := req.TopP; p != nil {
		probe.TopP = nonZero(*p)
	}
	// Only the validator's checks of the GPT-6 models read the tools and
	// the tool choice; giving them to it for other models would allocate.
	switch model {
	case oai.GPT6Astra, oai.GPT6Dot1Sol, oai.GPT6Sol, oai.GPT6Luna:
		if len(req.Tools) > 0 {
			probe.Tools = make([]oai.Tool, len(req.Tools))
			if tc := req.ToolChoice; tc != nil {
				probe.ToolChoice = string(tc.Mode)
			}
		}
	}
	v := oai.NewReasoningValidator()
	err = v.Validate(probe)
	if errors.Is(err, oai.ErrReasoningModelMaxTokensDeprecated) {
		probe.MaxCompletionTokens, probe.MaxTokens = probe.MaxTokens, 0
		err = v.Validate(probe)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("model %s: %w", model, err)
	}
	return probe.MaxTokens, probe.MaxCompletionTokens, nil
}

// completionOnly reports whether go-openai refuses model on the chat
// completions endpoint (models of the legacy completions API).
func completionOnly(model string) bool {
	switch model {
	case oai.CodexCodeDavinci002, oai.CodexCodeCushman001, oai.CodexCodeDavinci001,
		oai.GPT3TextDavinci003, oai.GPT3TextDavinci002, oai.GPT3TextCurie001,
		oai.GPT3TextBabbage001, oai.GPT3TextAda001, oai.GPT3TextDavinci001,
		oai.GPT3DavinciInstructBeta, oai.GPT3Davinci, oai.GPT3CurieInstructBeta,
		oai.GPT3Curie, oai.GPT3Ada, oai.GPT3Babbage:
		return true
	}
	return false
}

// nonZero returns f as a float32 that is never zero: go-openai omits a zero
// temperature or top_p, and its documented way to send an explicit 0 is the
// smallest float32, which servers read as 0.
func nonZero(f float64) float32 {
	if f == 0 {
		return math.SmallestNonzeroFloat32
	}
	return float32(f)
}

// appendMessage appends one message as go-openai's ChatCompletionMessage
// encodes it: content as a string when the message is a single text part,
// as an array of parts otherwise (checkRequest has vetted the parts).
func appendMessage(b []byte, m *messages.Message) []byte {
	b = append(b, `{"role":`...)
	b = messages.AppendJSONString(b, string(m.Role))
	if len(m.Content) == 1 && m.Content[0].Type == messages.PartText {
		if m.Content[0].Text != "" {
			b = append(b, `,"content":`...)
			b = messages.AppendJSONString(b, m.Content[0].Text)
		}
		b = appendOptional(b, `,"refusal":`, m.Refusal)
	} else {
		b = appendOptional(b, `,"refusal":`, m.Refusal)
		if len(m.Content) > 0 {
			b = append(b, `,"content":[`...)
			for j := range m.Content {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendPart(b, &m.Content[j])
			}
			b = append(b, ']')
		}
	}
	b = appendOptional(b, `,"name":`, m.Name)
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for j := range m.ToolCalls {
			c := &m.ToolCalls[j]
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			if c.ID != "" {
				b = append(b, `"id":`...)
				b = messages.AppendJSONString(b, c.ID)
				b = append(b, ',')
			}
			b = append(b, `"type":"function","function":{`...)
			sep := ""
			if c.Name != "" {
				b = append(b, `"name":`...)
				b = messages.AppendJSONString(b, c.Name)
				sep = ","
			}
			if c.Arguments != "" {
				b = append(b, sep...)
				b = append(b, `"arguments":`...)
				b = messages.AppendJSONString(b, c.Arguments)
			}
			b = append(b, `}}`...)
		}
		b = append(b, ']')
	}
	b = appendOptional(b, `,"tool_call_id":`, m.ToolCallID)
	return append(b, '}')
}

// appendPart appends a text or image part.
func appendPart(b []byte, p *messages.Part) []byte {
	if p.Type == messages.PartText {
		b = append(b, `{"type":"text"`...)
		b = appendOptional(b, `,"text":`, p.Text)
		return append(b, '}')
	}
	b = append(b, `{"type":"image_url","image_url":{`...)
	sep := ""
	if p.ImageURL.URL != "" {
		b = append(b, `"url":`...)
		b = messages.AppendJSONString(b, p.ImageURL.URL)
		sep = ","
	}
	if p.ImageURL.Detail != "" {
		b = append(b, sep...)
		b = append(b, `"detail":`...)
		b = messages.AppendJSONString(b, string(p.ImageURL.Detail))
	}
	return append(b, `}}`...)
}

// appendTool appends a function tool. go-openai encodes a tool through a
// map, so its members are in sorted order.
func appendTool(b []byte, t *messages.ToolDefinition) ([]byte, error) {
	b = append(b, `{"function":{"name":`...)
	b = messages.AppendJSONString(b, t.Name)
	b = appendOptional(b, `,"description":`, t.Description)
	if t.Strict {
		b = append(b, `,"strict":true`...)
	}
	b = append(b, `,"parameters":`...)
	params := []byte(t.Parameters)
	if len(params) == 0 {
		params = emptyParameters
	}
	b, err := appendRaw(b, params)
	if err != nil {
		return b, fmt.Errorf("tool %q: parameters: %w", t.Name, err)
	}
	return append(b, `},"type":"function"}`...), nil
}

// appendResponseFormat appends a response format whose type checkRequest
// has vetted.
func appendResponseFormat(b []byte, rf *messages.ResponseFormat) ([]byte, error) {
	switch rf.Type {
	case messages.ResponseText:
		return append(b, `{"type":"text"}`...), nil
	case messages.ResponseJSONObject:
		return append(b, `{"type":"json_object"}`...), nil
	}
	name := rf.Name
	if name == "" {
		name = defaultSchemaName
	}
	b = append(b, `{"type":"json_schema","json_schema":{"name":`...)
	b = messages.AppendJSONString(b, name)
	b = append(b, `,"schema":`...)
	if len(rf.Schema) == 0 {
		b = append(b, "null"...)
	} else {
		var err error
		if b, err = appendRaw(b, rf.Schema); err != nil {
			return b, fmt.Errorf("response format: schema: %w", err)
		}
	}
	b = append(b, `,"strict":`...)
	b = strconv.AppendBool(b, rf.Strict)
	return append(b, `}}`...), nil
}

// appendOptional appends key and s when s is not empty.
func appendOptional(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return messages.AppendJSONString(append(b, key...), s)
}

// errNotFinite reports a number JSON cannot hold.
var errNotFinite = errors.New("not a finite number")

// appendFloat32 appends f as encoding/json writes a float32.
func appendFloat32(b []byte, f float32) ([]byte, error) {
	if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		return b, errNotFinite
	}
	format := byte('f')
	if abs := float32(math.Abs(float64(f))); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, float64(f), format, -1, 32)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// hexDigits are the digits of the \u escapes appendRaw writes.
const hexDigits = "0123456789abcdef"

// errInvalidJSON reports a schema that is not JSON.
var errInvalidJSON = errors.New("not valid JSON")

// appendRaw appends raw JSON as encoding/json writes a json.RawMessage:
// compacted, with <, >, & and U+2028, U+2029 escaped inside strings.
func appendRaw(b, raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		return b, errInvalidJSON
	}
	inString, escaped := false, false
	start := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c == '<' || c == '>' || c == '&':
				b = append(b, raw[start:i]...)
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				start = i + 1
			case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
				b = append(b, raw[start:i]...)
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
				i += 2
				start = i + 1
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			b = append(b, raw[start:i]...)
			start = i + 1
		}
	}
	return append(b, raw[start:]...), nil
}
