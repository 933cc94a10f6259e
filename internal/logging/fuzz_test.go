package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agcore/agcore/redact"
)

// FuzzLogger logs arbitrary text as a message and a field beside a secret
// field and a configured secret, and checks that the event stays valid JSON
// and that neither secret reaches the output.
func FuzzLogger(f *testing.F) {
	f.Add("hello")
	f.Add(`token="x"`)
	f.Add("{\"api_key\":\"sk-aaaaaaaaaaaa\"}\n")
	f.Fuzz(func(t *testing.T, msg string) {
		const secret, configured = "FuzzSecretValue42", "FuzzConfiguredValue43"
		r := redact.New()
		r.Add(configured, "")
		var buf bytes.Buffer
		l, err := New(Options{Writer: &buf, Format: FormatJSON, Redactor: r})
		if err != nil {
			t.Fatal(err)
		}
		l.Info().Str("api_key", secret).Str("text", msg+configured).Msg(msg)
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("event for %q is not JSON: %q", msg, buf.Bytes())
		}
		if strings.Contains(buf.String(), secret) || strings.Contains(buf.String(), configured) {
			t.Fatalf("event for %q holds a secret: %q", msg, buf.Bytes())
		}
	})
}
