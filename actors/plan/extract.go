package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// extract returns the first top-level JSON object or array in text. It
// tolerates prose around the value and a Markdown code fence: when the text
// has a fence, a value inside the first fence wins. Prose brackets such as
// "[draft]" are passed over; a value that starts like JSON but is malformed
// gives a *PlanError with the offset of the bad byte in text.
func extract(text string) (json.RawMessage, error) {
	start := -1
	if lo, hi, ok := fence(text); ok {
		if i := findStart(text[lo:hi]); i >= 0 {
			start = lo + i
		}
	}
	if start < 0 {
		start = findStart(text)
	}
	if start < 0 {
		start = strings.IndexAny(text, "{[")
	}
	if start < 0 {
		return nil, &PlanError{Step: -1, Problem: "no JSON object or array found in the text"}
	}
	var raw json.RawMessage
	err := json.NewDecoder(strings.NewReader(text[start:])).Decode(&raw)
	if err == nil {
		return raw, nil
	}
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		// syn.Offset counts the bytes read, up to and including the bad one.
		at := int64(start) + max(syn.Offset-1, 0)
		return nil, &PlanError{Step: -1, Problem: fmt.Sprintf("invalid JSON at offset %d: %v", at, syn), Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, &PlanError{Step: -1, Problem: fmt.Sprintf("the JSON value starting at offset %d is cut off at offset %d", start, len(text)), Err: err}
	default:
		return nil, &PlanError{Step: -1, Problem: "invalid JSON: " + err.Error(), Err: err}
	}
}

// fence returns the bounds of the content of the first Markdown code fence
// in text: from the line after the opening ``` (which may name a language)
// to the closing ```, or to the end of text when there is none.
func fence(text string) (lo, hi int, ok bool) {
	open := strings.Index(text, "```")
	if open < 0 {
		return 0, 0, false
	}
	lo = open + 3
	if nl := strings.IndexByte(text[lo:], '\n'); nl >= 0 {
		lo += nl + 1
	}
	hi = len(text)
	if end := strings.Index(text[lo:], "```"); end >= 0 {
		hi = lo + end
	}
	return lo, hi, true
}

// findStart returns the offset of the first '{' or '[' in s that begins
// like a plan: an object whose next token is a key or its end, or an array
// whose next token is an object, string, array or its end. It returns -1
// when there is none.
func findStart(s string) int {
	for i := 0; i < len(s); i++ {
		var follow string
		switch s[i] {
		case '{':
			follow = `"}`
		case '[':
			follow = `{["]`
		default:
			continue
		}
		rest := strings.TrimLeft(s[i+1:], " \t\r\n")
		if rest != "" && strings.IndexByte(follow, rest[0]) >= 0 {
			return i
		}
	}
	return -1
}
