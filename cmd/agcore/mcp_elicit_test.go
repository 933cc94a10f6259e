package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agcore/agcore/toolsys/mcp"
)

// TestElicitPrompt asks each field (Enter keeps the default, a value of
// the wrong type is asked again) and then the action.
func TestElicitPrompt(t *testing.T) {
	q := mcp.Elicitation{Server: "srv", Message: "Who are you?", Mode: "form", Schema: &jsonschema.Schema{
		Type: "object", Required: []string{"age"},
		Properties: map[string]*jsonschema.Schema{
			"age":  {Type: "integer", Description: "in years"},
			"name": {Type: "string", Default: json.RawMessage(`"Ann"`)},
		}}}
	tests := []struct {
		name, input string
		want        mcp.ElicitAction
		content     map[string]any
		shown       string
	}{
		{"accept", "forty\n40\n\na\n", mcp.ElicitAccept, map[string]any{"age": int64(40)}, `want a whole number, got "forty"`},
		{"missing required field asked again", "\n\n7\n\naccept\n", mcp.ElicitAccept, map[string]any{"age": int64(7)}, "please answer again"},
		{"decline", "1\nBob\nd\n", mcp.ElicitDecline, nil, "name [\"Ann\"]: "},
		{"cancel", "1\n\nc\n", mcp.ElicitCancel, nil, "age (in years): "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			ans, err := newElicitPrompt(strings.NewReader(tc.input), &out).ask(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if ans.Action != tc.want || len(ans.Content) != len(tc.content) {
				t.Fatalf("answer %+v, want %s %v", ans, tc.want, tc.content)
			}
			for k, v := range tc.content {
				if ans.Content[k] != v {
					t.Errorf("content[%s] = %v, want %v", k, ans.Content[k], v)
				}
			}
			if !strings.Contains(out.String(), "MCP server srv asks: Who are you?") || !strings.Contains(out.String(), tc.shown) {
				t.Errorf("prompt output lacks %q:\n%s", tc.shown, out.String())
			}
		})
	}
	// The input ends before an answer: an error, which the client turns
	// into a cancellation.
	if _, err := newElicitPrompt(strings.NewReader("1\n"), &strings.Builder{}).ask(t.Context(), q); err == nil {
		t.Error("ask with no more input: no error")
	}
}
