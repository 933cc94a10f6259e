package wasm

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/toolsys"
)

func TestParseOutput(t *testing.T) {
	tests := []struct {
		name, stdout string
		want         toolsys.Result
	}{
		{"plain", "hello\n", toolsys.Result{Content: "hello"}},
		{"plain keeps inner newlines", "a\n\nb\r\n\n", toolsys.Result{Content: "a\n\nb"}},
		{"structured", `{"content":"done","error":false,"metadata":{"n":1,"s":"x"}}`,
			toolsys.Result{Content: "done", Metadata: map[string]any{"n": json.Number("1"), "s": "x"}}},
		{"structured error", "  {\"content\":\"bad input\",\"error\":true}\n", toolsys.Result{Content: "bad input", IsError: true}},
		{"content only", `{"content":"x"}`, toolsys.Result{Content: "x"}},
		{"content not a string", `{"content":{"b":[1, 2]}}`, toolsys.Result{Content: `{"b":[1,2]}`}},
		{"content null", `{"content":null,"metadata":null}`, toolsys.Result{}},
		{"no content key is plain", `{"result":"x"}`, toolsys.Result{Content: `{"result":"x"}`}},
		{"an extra key is plain", `{"content":"x","extra":1}`, toolsys.Result{Content: `{"content":"x","extra":1}`}},
		{"error not a boolean is plain", `{"content":"x","error":"yes"}`, toolsys.Result{Content: `{"content":"x","error":"yes"}`}},
		{"metadata not an object is plain", `{"content":"x","metadata":[1]}`, toolsys.Result{Content: `{"content":"x","metadata":[1]}`}},
		{"two objects are plain", `{"content":"a"}{"content":"b"}`, toolsys.Result{Content: `{"content":"a"}{"content":"b"}`}},
		{"truncated JSON is plain", `{"content":"a`, toolsys.Result{Content: `{"content":"a`}},
		{"an array is plain", `[{"content":"a"}]`, toolsys.Result{Content: `[{"content":"a"}]`}},
		{"invalid UTF-8 replaced", "ok \xff\n", toolsys.Result{Content: "ok \uFFFD"}},
		{"empty", "", toolsys.Result{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseOutput([]byte(tt.stdout))); diff != "" {
				t.Errorf("parseOutput(%q) (-want +got):\n%s", tt.stdout, diff)
			}
		})
	}
}

// FuzzParseOutput checks that any output maps to a result whose content
// is valid UTF-8, that the structured form is recognised only when it is
// exactly one object of the known keys, and that a result's metadata
// encodes back to JSON.
func FuzzParseOutput(f *testing.F) {
	f.Add([]byte(`{"content":"done","error":true,"metadata":{"a":[1,{"b":null}]}}`))
	f.Add([]byte("plain text\n"))
	f.Add([]byte(`{"content":{"x":1e400}}`))
	f.Add([]byte("{\"content\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, stdout []byte) {
		res := parseOutput(stdout)
		if !utf8.ValidString(res.Content) {
			t.Fatalf("content %q is not valid UTF-8", res.Content)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("the result does not encode: %v", err)
		}
		var obj map[string]json.RawMessage
		isObject := json.Unmarshal(stdout, &obj) == nil && obj != nil
		_, structured := structured(stdout)
		if structured && !isObject {
			t.Fatalf("%q was taken as the structured form but is not one JSON object", stdout)
		}
		if structured {
			if _, ok := obj["content"]; !ok {
				t.Fatalf("%q was taken as the structured form without a content key", stdout)
			}
			return
		}
		if res.IsError || res.Metadata != nil {
			t.Fatalf("plain output %q gave %+v", stdout, res)
		}
		if want := strings.TrimRight(strings.ToValidUTF8(string(stdout), "\uFFFD"), "\r\n"); res.Content != want {
			t.Fatalf("plain content = %q, want %q", res.Content, want)
		}
	})
}
