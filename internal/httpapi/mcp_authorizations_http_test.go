package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/toolsys/mcp"
)

// fakeAuthorizations is an AuthorizationLister with a fixed list.
type fakeAuthorizations []mcp.PendingAuthorization

func (f fakeAuthorizations) Pending() []mcp.PendingAuthorization { return f }

func withAuthorizations(l httpapi.AuthorizationLister) func(*httpapi.Config) {
	return func(c *httpapi.Config) { c.MCPAuthorizations = l }
}

// TestMCPAuthorizations_Listed lists the pending authorizations to the
// operator: with the token, same-origin, and never to a request without
// the token or from a foreign page.
func TestMCPAuthorizations_Listed(t *testing.T) {
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pending := fakeAuthorizations{{Server: "github", URL: "https://as.example/authorize?state=x&client_id=c",
		RedirectURL: "http://127.0.0.1:43123/callback", Started: started, Expires: started.Add(10 * time.Minute)}}
	e := newEnv(t, envOptions{script: exploreScript(), token: "s3cret", config: withAuthorizations(pending)})

	resp, body := e.do("GET", "/v1/mcp/authorizations", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/mcp/authorizations: %d %s", resp.StatusCode, body)
	}
	want := httpapi.MCPAuthorizationList{Authorizations: []httpapi.PendingMCPAuthorization{{Server: "github", URL: pending[0].URL,
		RedirectURL: pending[0].RedirectURL, Started: started, Expires: started.Add(10 * time.Minute)}}}
	if diff := cmp.Diff(want, decode[httpapi.MCPAuthorizationList](t, body)); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}

	refused := []struct {
		name   string
		header []string
		status int
	}{
		{"no token", []string{"Authorization", ""}, http.StatusUnauthorized},
		{"wrong token", []string{"Authorization", "Bearer nope"}, http.StatusUnauthorized},
		{"foreign page", []string{"Origin", foreignOrigin, "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
	}
	for _, r := range refused {
		t.Run(r.name, func(t *testing.T) {
			resp, body := e.do("GET", "/v1/mcp/authorizations", "", r.header...)
			if resp.StatusCode != r.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, r.status, body)
			}
			if strings.Contains(string(body), "as.example") {
				t.Errorf("a refused request saw the URL: %s", body)
			}
		})
	}
}

// TestMCPAuthorizations_NoneIsAnEmptyList answers an empty list, not
// null, when no lister is configured.
func TestMCPAuthorizations_NoneIsAnEmptyList(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript()})
	resp, body := e.do("GET", "/v1/mcp/authorizations", "")
	if resp.StatusCode != http.StatusOK || string(body) != "{\"authorizations\":[]}\n" {
		t.Fatalf("GET /v1/mcp/authorizations: %d %q, want 200 and an empty list", resp.StatusCode, body)
	}
}
