package actors

// This file holds canonicalAnswer, the first step of checking a model's
// structured answer: the untrusted text becomes one compact JSON object.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// maxAnswerBytes bounds the answer that is parsed; a longer one is refused
// with a problem the model can read.
const maxAnswerBytes = 1 << 20

// canonicalAnswer turns a model's answer into compact JSON with sorted
// keys: surrounding white space and one Markdown code fence (```json ...
// ```) are removed, the rest must be one JSON object, and properties whose
// value is null are dropped at every depth (a model in strict mode sends
// null for an optional field it leaves out; a required one then reads as
// missing). Numbers are kept exactly as written. Anything else yields
// toolsys.ArgumentErrors saying what is wrong.
func canonicalAnswer(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) > maxAnswerBytes {
		return nil, answerProblem("the answer is %d bytes, more than the %d accepted", len(raw), maxAnswerBytes)
	}
	text := unfence(strings.TrimSpace(string(raw)))
	if text == "" {
		return nil, answerProblem("the answer is empty: expected a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, answerProblem("the answer is not valid JSON: %v at offset %d", se, se.Offset)
		}
		return nil, answerProblem("the answer is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, answerProblem("the answer is not valid JSON: unexpected data after the object at offset %d", dec.InputOffset())
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, answerProblem("the answer must be a JSON object, got %s", kindOf(v))
	}
	dropNulls(obj)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, answerProblem("the answer cannot be encoded: %v", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// unfence removes one Markdown code fence around s, if s is exactly one.
func unfence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := s[3 : len(s)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return s
	}
	if info := strings.TrimSpace(body[:nl]); info != "" && info != "json" && info != "JSON" {
		return s
	}
	return strings.TrimSpace(body[nl+1:])
}

// dropNulls removes the null properties of every object in v.
func dropNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range v {
			dropNulls(e)
		}
	}
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func answerProblem(format string, args ...any) error {
	return toolsys.ArgumentErrors{{Problem: fmt.Sprintf(format, args...)}}
}
