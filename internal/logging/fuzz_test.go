package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzRedact checks that Redact is idempotent, that no sk- key survives it,
// and that its quick filter lets through everything it or SecretKey matches.
func FuzzRedact(f *testing.F) {
	f.Add("Authorization: Bearer abc.def")
	f.Add("key " + testKey + " and api_key=xyz")
	f.Fuzz(func(t *testing.T, s string) {
		if redactAll(s) != s && !mightHoldSecret(s) {
			t.Fatalf("mightHoldSecret(%q) = false, but Redact changes it", s)
		}
		if SecretKey(s) && !mightHoldSecret(s) {
			t.Fatalf("mightHoldSecret(%q) = false for a secret key", s)
		}
		got := Redact(s)
		if again := Redact(got); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
		if skKey.MatchString(got) {
			t.Fatalf("Redact(%q) = %q still holds a key", s, got)
		}
	})
}

// FuzzRedactWriter writes arbitrary text as a log message, and arbitrary
// bytes as a raw line, and checks that a JSON event stays valid JSON and that
// the secret field's value never survives.
func FuzzRedactWriter(f *testing.F) {
	f.Add("hello", []byte(`{"a":1}`+"\n"))
	f.Add("token=\"x\"", []byte(`{"api_key":{"n":[1,"sk-aaaaaaaaaaaa"]}}`))
	f.Fuzz(func(t *testing.T, msg string, raw []byte) {
		const secret = "FuzzSecretValue42"
		var buf bytes.Buffer
		l, err := New(Options{Writer: &buf, Format: FormatJSON})
		if err != nil {
			t.Fatal(err)
		}
		l.Info().Str("api_key", secret).Str("text", msg).Msg(msg)
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("event for %q is not JSON: %q", msg, buf.Bytes())
		}
		if strings.Contains(buf.String(), secret) {
			t.Fatalf("event for %q holds the secret: %q", msg, buf.Bytes())
		}

		buf.Reset()
		if n, err := RedactWriter(&buf).Write(raw); err != nil || n != len(raw) {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if json.Valid(raw) && !json.Valid(buf.Bytes()) {
			t.Fatalf("valid JSON %q became %q", raw, buf.Bytes())
		}
	})
}
