package toolsys

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
)

// at walks a decoded JSON document along keys.
func at(t *testing.T, doc any, path ...string) any {
	t.Helper()
	cur := doc
	for i, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s is %T, not an object", strings.Join(path[:i], "."), cur)
		}
		if cur, ok = m[k]; !ok {
			t.Fatalf("%s has no %q (keys: %v)", strings.Join(path[:i], "."), k, sortedKeys(m))
		}
	}
	return cur
}

func decode(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	return v
}

// forbiddenKeywords finds document keywords in every schema position of
// s (values of unknown keywords are data, not schemas).
func forbiddenKeywords(s any, path string, found *[]string) {
	switch v := s.(type) {
	case map[string]any:
		for k, e := range v {
			switch k {
			case "$ref", "$defs", "definitions", "$schema", "$id", "title":
				*found = append(*found, path+"/"+k)
			}
			switch {
			case slices.Contains(schemaMapValued, k):
				if m, ok := e.(map[string]any); ok {
					for name, p := range m {
						forbiddenKeywords(p, path+"/"+k+"/"+name, found)
					}
				}
			case slices.Contains(schemaValued, k), slices.Contains(schemaListValued, k):
				forbiddenKeywords(e, path+"/"+k, found)
			}
		}
	case []any:
		for _, e := range v {
			forbiddenKeywords(e, path+"[]", found)
		}
	}
}

// objectsWithoutProperties finds schemas of type object lacking properties.
func objectsWithoutProperties(s any, path string, found *[]string) {
	switch v := s.(type) {
	case map[string]any:
		if isObjectType(v["type"]) {
			if _, ok := v["properties"]; !ok {
				*found = append(*found, path)
			}
		}
		for k, e := range v {
			if k != "enum" && k != "default" && k != "const" {
				objectsWithoutProperties(e, path+"/"+k, found)
			}
		}
	case []any:
		for _, e := range v {
			objectsWithoutProperties(e, path+"[]", found)
		}
	}
}

func TestReflectSchema_Shape(t *testing.T) {
	raw, err := ReflectSchema[searchParams]()
	if err != nil {
		t.Fatal(err)
	}
	doc := decode(t, raw)
	var bad []string
	forbiddenKeywords(doc, "", &bad)
	objectsWithoutProperties(doc, "", &bad)
	if len(bad) > 0 {
		t.Errorf("schema has forbidden or incomplete nodes %v:\n%s", bad, raw)
	}
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"type"}, "object"},
		{[]string{"additionalProperties"}, false},
		{[]string{"required"}, []any{"query"}},
		{[]string{"properties", "query", "description"}, "Text to look for"},
		{[]string{"properties", "mode", "enum"}, []any{"fast", "slow"}},
		{[]string{"properties", "limit", "minimum"}, float64(1)},
		{[]string{"properties", "limit", "maximum"}, float64(100)},
		{[]string{"properties", "items", "items", "type"}, "object"},
		{[]string{"properties", "items", "items", "required"}, []any{"label"}},
		{[]string{"properties", "nested", "items", "items", "properties", "label", "type"}, "string"},
		{[]string{"properties", "nested", "items", "items", "properties", "label", "description"}, "What the item is called"},
		{[]string{"properties", "nested", "items", "items", "properties", "count", "minimum"}, float64(1)},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, at(t, doc, c.path...)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", strings.Join(c.path, "."), diff)
		}
	}
}

func TestNormalizeSchema_Document(t *testing.T) {
	in := `{
	  "$schema": "https://json-schema.org/draft/2020-12/schema",
	  "$id": "https://example.com/p",
	  "title": "Params",
	  "$ref": "#/$defs/Params",
	  "$defs": {
	    "Params": {"type": "object", "title": "P", "properties": {
	      "title": {"type": "string", "title": "a property named title stays", "default": "x"},
	      "items": {"type": "array", "items": {"$ref": "#/definitions/Item"}},
	      "meta": {"type": "object"},
	      "pick": {"$ref": "#/$defs/Choice", "description": "overrides"}
	    }, "required": ["title"]},
	    "Choice": {"type": "string", "enum": ["a", "b"], "description": "base"}
	  },
	  "definitions": {
	    "Item": {"type": "object", "properties": {"label": {"type": "string", "pattern": "^[a-z]+$", "format": "hostname"}}}
	  }
	}`
	out, err := NormalizeSchema(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"items":{"items":{"properties":{"label":{"format":"hostname","pattern":"^[a-z]+$","type":"string"}},"type":"object"},"type":"array"},"meta":{"properties":{},"type":"object"},"pick":{"description":"overrides","enum":["a","b"],"type":"string"},"title":{"default":"x","type":"string"}},"required":["title"],"type":"object"}`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("NormalizeSchema (-want +got):\n%s", diff)
	}
	again, err := NormalizeSchema(out)
	if err != nil || string(again) != string(out) {
		t.Errorf("not idempotent: %s, %v", again, err)
	}
}

func TestNormalizeSchema_Errors(t *testing.T) {
	tests := []struct {
		name, in string
		is       error
		want     string
	}{
		{"self reference", `{"$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"}}}},"$ref":"#/$defs/Node"}`, ErrRecursiveSchema, `recursive type "Node"`},
		{"mutual recursion", `{"$defs":{"A":{"items":{"$ref":"#/$defs/B"}},"B":{"items":{"$ref":"#/$defs/A"}}},"$ref":"#/$defs/A"}`, ErrRecursiveSchema, `recursive type "A"`},
		{"root reference", `{"type":"object","properties":{"self":{"$ref":"#"}}}`, ErrRecursiveSchema, `recursive type "root"`},
		{"dangling", `{"$ref":"#/$defs/Missing"}`, nil, `does not resolve`},
		{"remote", `{"$ref":"https://example.com/s.json"}`, nil, `not local`},
		{"not an object", `[1]`, nil, `root must be a JSON object`},
		{"not JSON", `{`, nil, `not valid JSON`},
		{"blow-up", blowUpSchema(), nil, `more than 20000 nodes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NormalizeSchema(json.RawMessage(tt.in))
			var se *SchemaError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a *SchemaError containing %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.is)
			}
		})
	}
}

// blowUpSchema doubles its size with every definition once inlined.
func blowUpSchema() string {
	var sb strings.Builder
	sb.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range 20 {
		if i > 0 {
			sb.WriteString(",")
		}
		next := `{"type":"string"}`
		if i < 19 {
			next = `{"$ref":"#/$defs/d` + string(rune('a'+i)) + `"}`
		}
		name := "d0"
		if i > 0 {
			name = "d" + string(rune('a'+i-1))
		}
		sb.WriteString(`"` + name + `":{"allOf":[` + next + `,` + next + `]}`)
	}
	sb.WriteString(`}}`)
	return sb.String()
}

func TestStrictSchema(t *testing.T) {
	norm, err := ReflectSchema[searchParams]()
	if err != nil {
		t.Fatal(err)
	}
	strict, err := StrictSchema(norm)
	if err != nil {
		t.Fatal(err)
	}
	doc := decode(t, strict)
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"required"}, []any{"exact", "items", "limit", "mode", "nested", "query", "tags"}},
		{[]string{"additionalProperties"}, false},
		{[]string{"properties", "query", "type"}, "string"},
		{[]string{"properties", "limit", "type"}, []any{"integer", "null"}},
		{[]string{"properties", "mode", "enum"}, []any{"fast", "slow", nil}},
		{[]string{"properties", "items", "type"}, []any{"array", "null"}},
		{[]string{"properties", "items", "items", "required"}, []any{"count", "label"}},
		{[]string{"properties", "items", "items", "additionalProperties"}, false},
		{[]string{"properties", "items", "items", "properties", "count", "type"}, []any{"integer", "null"}},
		{[]string{"properties", "items", "items", "properties", "label", "type"}, "string"},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, at(t, doc, c.path...)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", strings.Join(c.path, "."), diff)
		}
	}

	// A map has free-form keys, which strict mode cannot express.
	type withMap struct {
		Env map[string]string `json:"env"`
	}
	mapSchema, err := ReflectSchema[withMap]()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StrictSchema(mapSchema); !errors.Is(err, ErrNotStrict) {
		t.Errorf("StrictSchema(map) err = %v, want ErrNotStrict", err)
	}
}

func TestStrictSchema_NullsAreAccepted(t *testing.T) {
	// What a strict-mode model sends for fields it leaves out.
	st := &searchTool{got: make(chan searchParams, 1)}
	res, err := Bridge[searchParams](st).Execute(t.Context(), json.RawMessage(
		`{"query":"q","mode":null,"limit":null,"items":null,"nested":null,"tags":null,"exact":null}`), nil)
	if err != nil || res.IsError {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	if diff := cmp.Diff(searchParams{Query: "q"}, <-st.got); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
}

func TestNormalizedSchema_AsOpenAITool(t *testing.T) {
	schema, err := ReflectSchema[searchParams]()
	if err != nil {
		t.Fatal(err)
	}
	strict, err := StrictSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		params json.RawMessage
		strict bool
	}{{"normalized", schema, false}, {"strict", strict, true}} {
		t.Run(tc.name, func(t *testing.T) {
			tool := openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: "search", Description: "Search things.", Strict: tc.strict, Parameters: tc.params,
			}}
			b, err := json.Marshal(tool)
			if err != nil {
				t.Fatal(err)
			}
			doc := decode(t, b)
			if got := at(t, doc, "type"); got != "function" {
				t.Errorf("type = %v", got)
			}
			if got := at(t, doc, "function", "parameters", "properties", "query", "type"); got != "string" {
				t.Errorf("query type = %v in %s", got, b)
			}
			// The wire form round-trips into the request type the client sends.
			var back openai.Tool
			if err := json.Unmarshal(b, &back); err != nil || back.Function == nil || back.Function.Name != "search" {
				t.Errorf("round trip = %+v, %v", back, err)
			}
		})
	}
}

func FuzzNormalizeSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object"}`,
		`{"$ref":"#/$defs/A","$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}}},"B":{"type":"array","items":{"type":"string"}}}}`,
		`{"type":"object","properties":{"self":{"$ref":"#"}}}`,
		`{"allOf":[{"$ref":"#/definitions/x"}],"definitions":{"x":{"title":"t"}}}`,
		`{"properties":{"$ref":{"type":"string"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := NormalizeSchema(in)
		if err != nil {
			return
		}
		var bad []string
		forbiddenKeywords(decode(t, out), "", &bad)
		if len(bad) > 0 {
			t.Fatalf("output keeps %v: %s", bad, out)
		}
		again, err := NormalizeSchema(out)
		if err != nil {
			t.Fatalf("normalising the output failed: %v\n%s", err, out)
		}
		if string(again) != string(out) {
			t.Fatalf("not idempotent:\n%s\n%s", out, again)
		}
	})
}
