package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// fuzzSecret is a configured value no output may hold.
const fuzzSecret = "FuzzConfigured-Secret.42"

// FuzzRedactor checks, for arbitrary text, that String and Content are
// idempotent, that no credential of a known shape and no configured value
// survives either, and that the quick filter lets through everything the
// patterns match.
func FuzzRedactor(f *testing.F) {
	f.Add("Authorization: Bearer abc.def-123")
	f.Add("key " + testKey + " and api_key=xyz")
	f.Add("cookie: a=b " + fuzzSecret)
	f.Add("ghp_0123456789abcdefghijABCDEFGHIJklmnop AKIAIOSFODNN7EXAMPLE")
	f.Fuzz(func(t *testing.T, s string) {
		if p := maskPairs(maskShapes(s)); p != s && !mightMatch(s) {
			t.Fatalf("mightMatch(%q) = false, but the patterns change it to %q", s, p)
		}
		if SecretKey(s) && !mightMatch(s) {
			t.Fatalf("mightMatch(%q) = false for a secret key", s)
		}
		r := New()
		r.Add(fuzzSecret, "")
		in := s + " " + fuzzSecret + " " + s
		for name, mask := range map[string]func(string) string{"String": r.String, "Content": r.Content} {
			got := mask(in)
			if again := mask(got); again != got {
				t.Fatalf("%s not idempotent: %q -> %q -> %q", name, in, got, again)
			}
			if strings.Contains(got, fuzzSecret) {
				t.Fatalf("%s(%q) = %q holds the configured value", name, in, got)
			}
			for _, re := range shapes {
				if re.MatchString(got) {
					t.Fatalf("%s(%q) = %q still holds a key (%s)", name, in, got, re)
				}
			}
		}
	})
}

// FuzzRedactorJSON feeds arbitrary bytes as a JSON event and checks that
// valid JSON stays valid, a secret-named member's value never survives, and
// neither does a configured value.
func FuzzRedactorJSON(f *testing.F) {
	f.Add("hello", []byte(`{"a":1}`+"\n"))
	f.Add(`token="x"`, []byte(`{"api_key":{"n":[1,"sk-aaaaaaaaaaaa"]}}`))
	f.Fuzz(func(t *testing.T, msg string, raw []byte) {
		r := New()
		r.Add(fuzzSecret, "")
		ev, _ := json.Marshal(map[string]string{"password": "plain-value-77", "msg": msg + fuzzSecret})
		out := r.JSON(ev)
		if !json.Valid(out) {
			t.Fatalf("event for %q is no longer JSON: %s", msg, out)
		}
		if bytes.Contains(out, []byte("plain-value-77")) || bytes.Contains(out, []byte(fuzzSecret)) {
			t.Fatalf("event for %q holds a secret: %s", msg, out)
		}
		got := r.JSON(raw)
		if json.Valid(raw) && !json.Valid(got) {
			t.Fatalf("valid %q became invalid %q", raw, got)
		}
	})
}
