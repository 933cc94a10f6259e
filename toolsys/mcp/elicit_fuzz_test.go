package mcp_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agcore/agcore/toolsys/mcp"
)

// FuzzApplyElicitationSchema feeds ApplyElicitationSchema a server's
// schema and a user's answer, both untrusted: it must not panic, must not
// change the answer it was given, and what it accepts it accepts again
// unchanged.
func FuzzApplyElicitationSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"name":{"type":"string","default":"Ann"},"age":{"type":"integer"}},"required":["age"]}`, `{"age":3}`)
	f.Add(`{"type":"object","properties":{"c":{"type":"string","enum":["a","b"],"default":"a"}}}`, `{}`)
	f.Add(`{"type":"object","properties":{"ok":{"type":"boolean","default":true},"n":{"type":"number","minimum":1}}}`, `{"n":0.5}`)
	f.Add(`{"type":"object","properties":{"s":{"type":"string","format":"email","maxLength":5}}}`, `{"s":"a@b.c"}`)
	f.Add(`{"$ref":"#/x"}`, `{"x":null}`)
	f.Fuzz(func(t *testing.T, schemaJSON, contentJSON string) {
		var schema jsonschema.Schema
		if err := json.Unmarshal([]byte(schemaJSON), &schema); err != nil {
			return
		}
		var content map[string]any
		if err := json.Unmarshal([]byte(contentJSON), &content); err != nil {
			return
		}
		before, _ := json.Marshal(content)
		got, err := mcp.ApplyElicitationSchema(&schema, content)
		if after, _ := json.Marshal(content); string(after) != string(before) {
			t.Fatalf("the answer was changed: %s -> %s", before, after)
		}
		if err != nil {
			return
		}
		again, err := mcp.ApplyElicitationSchema(&schema, got)
		if err != nil {
			t.Fatalf("accepted %v, then refused it: %v", got, err)
		}
		if !reflect.DeepEqual(again, got) {
			t.Fatalf("not stable: %v then %v", got, again)
		}
	})
}
