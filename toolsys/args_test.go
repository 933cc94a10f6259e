package toolsys

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestStripEmptyOptionals_DropsEmptyOptional(t *testing.T) {
	out, err := StripEmptyOptionals(json.RawMessage(`{"query":"q","mode":"","limit":null,"tags":[""]}`), []string{"query"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"query":"q","tags":[""]}`, string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStripEmptyOptionals_KeepsEmptyRequired(t *testing.T) {
	in := json.RawMessage(`{"query":"","mode":"fast"}`)
	out, err := StripEmptyOptionals(in, []string{"query"})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(in) {
		t.Errorf("got %s, want the input unchanged", out)
	}
	// And the bridge passes the empty required string on to the tool.
	st := &searchTool{got: make(chan searchParams, 1)}
	res, err := Bridge[searchParams](st).Execute(t.Context(), in, nil)
	if err != nil || res.IsError {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	if p := <-st.got; p.Query != "" || p.Mode != "fast" {
		t.Errorf("params = %+v", p)
	}
}

func TestStripEmptyOptionals_Malformed(t *testing.T) {
	var ae *ArgumentError
	if _, err := StripEmptyOptionals(json.RawMessage(`{"a":`), nil); !errors.As(err, &ae) {
		t.Errorf("err = %v, want an *ArgumentError", err)
	}
}

func TestCompileSchema_RawSchema(t *testing.T) {
	// A hand-written schema as an MCP server publishes it.
	v, err := CompileSchema(json.RawMessage(`{
	  "$schema": "http://json-schema.org/draft-07/schema#",
	  "type": "object",
	  "properties": {
	    "path": {"type": "string", "minLength": 1},
	    "depth": {"type": "integer", "exclusiveMinimum": 0},
	    "kind": {"anyOf": [{"type": "string", "enum": ["file", "dir"]}, {"type": "null"}]},
	    "opts": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"], "additionalProperties": false}
	  },
	  "required": ["path"],
	  "additionalProperties": false
	}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args string
		want []string // empty: valid
	}{
		{`{"path":"a"}`, nil},
		{`{"path":"a","kind":null,"opts":{"x":true}}`, nil},
		{`{"path":""}`, []string{`field "path": must be at least 1 characters long, got 0`}},
		{`{"path":"a","depth":0}`, []string{`field "depth": must be > 0, got 0`}},
		{`{"path":"a","kind":"link"}`, []string{`field "kind": does not match any allowed form`, `must be one of ["file","dir"], got "link"`}},
		{`{"path":"a","opts":{}}`, []string{`field "opts.x": is required but missing`}},
		{`{"path":"a","opts":{"x":true,"y":1}}`, []string{`unknown field "opts.y" (known fields: "x")`}},
		{`{"depth":"deep","extra":1}`, []string{`field "depth": expected integer, got string "deep"`, `unknown field "extra"`, `field "path": is required but missing`}},
	}
	for _, tt := range tests {
		err := v.Validate(json.RawMessage(tt.args))
		if len(tt.want) == 0 {
			if err != nil {
				t.Errorf("Validate(%s) = %v, want nil", tt.args, err)
			}
			continue
		}
		var list ArgumentErrors
		if !errors.As(err, &list) || len(list) != len(tt.want) && !strings.Contains(tt.want[0], "any allowed form") {
			t.Errorf("Validate(%s) = %v, want %d ArgumentErrors", tt.args, err, len(tt.want))
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(%s) = %q, want it to contain %q", tt.args, err, w)
			}
		}
	}
}

func TestArgumentError_Fields(t *testing.T) {
	v, err := CompileSchema(mustReflect[searchParams](t))
	if err != nil {
		t.Fatal(err)
	}
	err = v.Validate(json.RawMessage(`{"query":"q","mode":"x","bogus":true}`))
	var got []ArgumentError
	for _, e := range err.(ArgumentErrors) {
		got = append(got, *e)
	}
	want := []ArgumentError{
		{Field: "bogus", Unknown: true, Problem: `known fields: "exact", "items", "limit", "mode", "nested", "query", "tags"`},
		{Field: "mode", Problem: `must be one of ["fast","slow"], got "x"`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var ae *ArgumentError
	if !errors.As(err, &ae) || ae.Field != "bogus" {
		t.Errorf("errors.As found %+v", ae)
	}
}

func TestCompileSchema_Invalid(t *testing.T) {
	for _, s := range []string{`{`, `{"type":12}`, `{"pattern":"("}`} {
		if _, err := CompileSchema(json.RawMessage(s)); err == nil {
			t.Errorf("CompileSchema(%s) succeeded", s)
		}
	}
}

func mustReflect[P any](t testing.TB) json.RawMessage {
	t.Helper()
	s, err := ReflectSchema[P]()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func FuzzArguments(f *testing.F) {
	for _, s := range []string{
		`{"query":"q"}`,
		`{"query":"q","mode":"slow","limit":100,"items":[{"label":"a","count":3}],"nested":[[{"label":"b"}]],"tags":["t"],"exact":true}`,
		`{"query":"","mode":"","limit":null}`,
		`{"query":"q","limit":1e400}`,
		`{"query":"q"`,
		`{"query":"\u003csecret_ref:X>"}`,
		``,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	got := make(chan searchParams, 1)
	b := Bridge[searchParams](&searchTool{got: got}).(*bridge[searchParams])
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := b.parse(in)
		if err != nil {
			var list ArgumentErrors
			if !errors.As(err, &list) || len(list) == 0 || list.Error() == "" {
				t.Fatalf("rejection is not a non-empty ArgumentErrors: %#v", err)
			}
			return
		}
		// An accepted call re-encodes to arguments that are accepted again
		// and decode to the same parameters.
		re, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := b.parse(re)
		if err != nil {
			t.Fatalf("re-encoded %s rejected: %v (input %q)", re, err, in)
		}
		if diff := cmp.Diff(p, p2, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip differs (-first +second):\n%s", diff)
		}
		res, err := b.Execute(t.Context(), in, nil)
		if err != nil || res.IsError {
			t.Fatalf("parse accepted %q but Execute = %+v, %v", in, res, err)
		}
		<-got
	})
}
