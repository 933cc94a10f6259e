package actors

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agcore/agcore/toolsys"
)

type fuzzRecord struct {
	Title string   `json:"title"`
	Year  int      `json:"year,omitempty" jsonschema:"minimum=0"`
	Tags  []string `json:"tags,omitempty"`
	Owner struct {
		Name string `json:"name"`
	} `json:"owner"`
}

// FuzzAnswerDecoder feeds untrusted model answers to the decoder of
// structured output: it never panics, refuses with field-naming
// ArgumentErrors, and what it accepts is one compact JSON object without
// nulls that decodes into T and reads the same when checked again.
func FuzzAnswerDecoder(f *testing.F) {
	for _, s := range []string{
		`{"title":"Dune","year":1965,"owner":{"name":"Frank"}}`,
		"```json\n{\"title\":\"x\",\"owner\":{\"name\":\"y\"},\"tags\":null}\n```",
		`{"title":"x","owner":{"name":null}}`,
		`{"title":"x","owner":{"name":"y"},"year":1e400}`,
		`{"title":"x","owner":{"name":"y"}} trailing`,
		`[{"title":"x"}]`,
		`"just text"`,
		``,
		"```\n{}\n```",
		`{"title":"\u003cb\u003e","owner":{"name":"y"},"extra":1}`,
	} {
		f.Add(s)
	}
	dec, err := toolsys.NewDecoder[fuzzRecord]()
	if err != nil {
		f.Fatal(err)
	}
	checker := typedChecker[fuzzRecord]{dec: dec}
	f.Fuzz(func(t *testing.T, answer string) {
		out, err := checker.check(json.RawMessage(answer))
		if err != nil {
			var ae *toolsys.ArgumentError
			if !errors.As(err, &ae) {
				t.Fatalf("check(%q) error %v is not an *ArgumentError", answer, err)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatalf("accepted %q as %s, which is not a JSON object: %v", answer, out, err)
		}
		if hasNull(obj) {
			t.Fatalf("accepted %q as %s, which holds a null", answer, out)
		}
		again, err := checker.check(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("checking %s again = %s, %v", out, again, err)
		}
		if _, err := dec.Decode(out); err != nil {
			t.Fatalf("accepted %s does not decode: %v", out, err)
		}
	})
}

func hasNull(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range v {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}
