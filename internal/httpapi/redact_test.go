package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/redact"
)

// TestResponses_Masked journals a message holding a configured secret and a
// key of a known shape straight into the store (as an older version might
// have), and asks for an unknown session named by the secret: neither the
// history nor the error body gives them back.
func okScript() scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}}}}
}

func TestResponses_Masked(t *testing.T) {
	const secret = "configured-secret-0123456789"
	const shaped = "xoxb-0123456789-abcdefghijkl"
	r := redact.New()
	r.Add(secret, "<secret_ref:S>")
	e := newEnv(t, envOptions{script: okScript(), config: func(c *httpapi.Config) { c.Redactor = r }})
	act, tail, err := e.journal.Activate(t.Context(), "old", "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.journal.Append(t.Context(), "old", act, tail, messages.UserMessage{TurnID: "t", Message: messages.UserText("use " + secret + " and " + shaped)}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/sessions/old/history", "/v1/sessions/" + secret, "/v1/sessions/" + secret + "/history"} {
		resp, body := e.do(http.MethodGet, path, "")
		if strings.Contains(string(body), secret) || strings.Contains(string(body), shaped) {
			t.Errorf("GET %s = %d holds a secret: %s", path, resp.StatusCode, body)
		}
		if resp.StatusCode == http.StatusOK && !strings.Contains(string(body), "<secret_ref:S>") {
			t.Errorf("GET %s: placeholder missing: %s", path, body)
		}
	}
}
