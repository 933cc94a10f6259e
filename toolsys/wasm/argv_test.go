package wasm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/toolsys"
)

func TestHelp_Args(t *testing.T) {
	h, err := ParseHelp("", []byte(`agcore-tool: 1
description: d
permission: none
param: --mode string
param: --input string
param: --count integer
param: --ratio number
param: --loud boolean
param: --quiet boolean
param: --tag array
param: --n array items=integer
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		want       []string
	}{
		{"the convention's example", `{"mode":"encode","input":"hi"}`, []string{"--mode", "encode", "--input", "hi"}},
		{"declaration order, not argument order", `{"input":"hi","mode":"encode"}`, []string{"--mode", "encode", "--input", "hi"}},
		{"numbers as written", `{"count":3,"ratio":1.50}`, []string{"--count", "3", "--ratio", "1.50"}},
		{"booleans are bare flags", `{"loud":true,"quiet":false}`, []string{"--loud"}},
		{"arrays repeat the flag", `{"tag":["a","b c"],"n":[1,2]}`, []string{"--tag", "a", "--tag", "b c", "--n", "1", "--n", "2"}},
		{"values that look like flags stay values", `{"input":"--loud"}`, []string{"--input", "--loud"}},
		{"null and absent add nothing", `{"mode":null}`, nil},
		{"empty", `{}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := decodeObject(json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			got, err := h.Args(doc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Args(%s) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
	for args, field := range map[string]string{
		`{"input":"a\u0000b"}`:    "input",
		`{"tag":["ok","\u0000"]}`: "tag[1]",
		`{"loud":"yes"}`:          "loud",
		`{"tag":"a"}`:             "tag",
	} {
		doc, _ := decodeObject(json.RawMessage(args))
		_, err := h.Args(doc)
		var ae *toolsys.ArgumentError
		if !errors.As(err, &ae) || ae.Field != field {
			t.Errorf("Args(%s) = %v, want an ArgumentError for %s", args, err, field)
		}
	}
	if _, err := h.Args(map[string]any{"input": "a\x00b"}); err == nil || !strings.Contains(err.Error(), "NUL byte") {
		t.Errorf("a NUL byte = %v", err)
	}
}
