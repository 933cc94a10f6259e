package redact

import (
	"bytes"
	"encoding/json"
	"regexp"
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
	loose := map[*pattern]*regexp.Regexp{}
	for _, cs := range allMatcher.byFirst {
		for _, c := range cs {
			loose[c.p] = regexp.MustCompile(strings.Replace(c.p.re.String(), "^", "", 1))
		}
	}
	var shapeRes []*regexp.Regexp
	for _, p := range shapes {
		shapeRes = append(shapeRes, regexp.MustCompile(strings.Replace(p.re.String(), "^", `\b`, 1)))
	}
	f.Fuzz(func(t *testing.T, s string) {
		// The one-pass scan masks what each pattern, run over the whole
		// text, would find.
		for _, m := range []*matcher{contentMatcher, allMatcher} {
			got := m.apply(s)
			for _, cs := range m.byFirst {
				for _, c := range cs {
					loose := loose[c.p]
					for _, loc := range loose.FindAllStringSubmatchIndex(got, -1) {
						start := loc[0] + c.p.lead
						if c.p.boundary && loc[0] > 0 && wordByte(got[loc[0]-1]) {
							continue
						}
						sub := make([]string, len(loc)/2)
						for j := range sub {
							if loc[2*j] >= 0 {
								sub[j] = got[loc[2*j]:loc[2*j+1]]
							}
						}
						if c.p.mask(sub) != sub[0] && hasPrefixFold(got[start:], c.frag) {
							t.Fatalf("%q masked to %q still holds a match of %s at %d", s, got, c.p.re, loc[0])
						}
					}
				}
			}
		}
		// A value taken from the text itself is found wherever it is.
		if v := s[len(s)/2:]; len(v) >= MinLength && !strings.Contains(Mask, v) {
			r := New()
			r.Add(v, "")
			if got := r.String(s + "|" + s); strings.Contains(got, v) {
				t.Fatalf("known value %q survives in %q", v, got)
			}
		}
		if SecretKey(s) && !holds(keyMatcher, s) {
			t.Fatalf("the quick check misses the secret key %q", s)
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
			for _, p := range shapeRes {
				if p.MatchString(got) {
					t.Fatalf("%s(%q) = %q still holds a key (%s)", name, in, got, p)
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
		for name, mask := range map[string]func([]byte) []byte{"JSON": r.JSON, "ContentJSON": r.ContentJSON} {
			got := mask(raw)
			if json.Valid(raw) && !json.Valid(got) {
				t.Fatalf("%s: valid %q became invalid %q", name, raw, got)
			}
			if bytes.Contains(got, []byte(fuzzSecret)) {
				t.Fatalf("%s: %q holds the configured value", name, got)
			}
		}
	})
}
