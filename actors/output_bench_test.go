package actors

import (
	"encoding/json"
	"testing"

	"github.com/agcore/agcore/toolsys"
)

// BenchmarkAnswerCheck measures checking one answer, against the
// reflection of T's schema that SubmitAs does once per runtime.
func BenchmarkAnswerCheck(b *testing.B) {
	answer := json.RawMessage(`{"title":"Dune","year":1965,"tags":["sf","desert"],"owner":{"name":"Frank"}}`)
	b.Run("reflect", func(b *testing.B) {
		for b.Loop() {
			if _, err := toolsys.NewDecoder[fuzzRecord](); err != nil {
				b.Fatal(err)
			}
		}
	})
	dec, err := toolsys.NewDecoder[fuzzRecord]()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("typed", func(b *testing.B) {
		c := typedChecker[fuzzRecord]{dec: dec}
		for b.Loop() {
			if _, err := c.check(answer); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("schema", func(b *testing.B) {
		c, err := newSchemaChecker(dec.Schema())
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := c.check(answer); err != nil {
				b.Fatal(err)
			}
		}
	})
}
