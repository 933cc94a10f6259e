package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/toolsys/mcp"
)

// saasEchoScript calls the echo tool of the MCP server saas, then answers.
const saasEchoScript = `rules:
  - match: {role: user}
    reply:
      tool_calls:
        - {name: mcp__saas__echo, arguments: {message: "authorized"}}
  - match: {tool: mcp__saas__echo}
    reply: {text: "The server answered."}
`

// TestServe_MCPAuthorizationThroughTheAPI serves with an OAuth-protected
// MCP server that has no stored token: serve comes up with the server's
// authorization pending in GET /v1/mcp/authorizations; a browser on this
// machine follows the URL, the redirect reaches serve's loopback
// listener, the entry goes, and the server's tool is listed and called
// by a turn.
func TestServe_MCPAuthorizationThroughTheAPI(t *testing.T) {
	as := newTinyOAuth(t, probeServer())
	data := filepath.Join(t.TempDir(), "data")
	cfg := writeConfig(t, fmt.Sprintf("default_model: mock/scripted\n"+
		"providers:\n  - {name: mock, type: scripted, script: echo.yaml}\n"+
		"mcp_servers:\n  - name: saas\n    url: %s\n    oauth: {}\n", as.url()), map[string]string{"echo.yaml": saasEchoScript})
	ctx, cancel := context.WithCancel(t.Context())
	base, done := startServeConfig(t, ctx, cfg, "--data-dir", data, "--token", "tok", "--permission-mode", "bypass")
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})

	// serve waits for no one: the authorization is pending when it listens.
	code, body := request(t, "GET", base+"/v1/mcp/authorizations", "tok", "")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/mcp/authorizations: %d %s", code, body)
	}
	var list httpapi.MCPAuthorizationList
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Authorizations) != 1 || list.Authorizations[0].Server != "saas" ||
		!strings.HasPrefix(list.Authorizations[0].URL, as.srv.URL+"/authorize?") ||
		!strings.HasPrefix(list.Authorizations[0].RedirectURL, "http://127.0.0.1:") {
		t.Fatalf("pending authorizations %s, want the one of saas with its URL and a loopback redirect", body)
	}
	if code, _ := request(t, "GET", base+"/v1/mcp/authorizations", "", ""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	if code, body := request(t, "GET", base+"/v1/tools", "tok", ""); code != http.StatusOK || strings.Contains(body, "mcp__saas__echo") {
		t.Errorf("tools before the authorization: %d %s", code, body)
	}

	followAuthorization(t, list.Authorizations[0].URL)

	// The connection finishes on its own once the code is back; the API
	// has no event for it, so its state is read until it shows.
	waitFor(t, "the tool of saas listed and no authorization pending", func() bool {
		_, tools := request(t, "GET", base+"/v1/tools", "tok", "")
		_, pending := request(t, "GET", base+"/v1/mcp/authorizations", "tok", "")
		return strings.Contains(tools, `"mcp__saas__echo"`) && strings.Contains(pending, `"authorizations":[]`)
	})
	if as.authorizations() != 1 {
		t.Errorf("authorizations = %d, want 1", as.authorizations())
	}
	if st, err := os.Stat(filepath.Join(data, "mcp-oauth", "saas.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v, %v; want mode 0600", err, st)
	}

	if code, body := request(t, "POST", base+"/v1/sessions", "tok", `{"id":"s1"}`); code != http.StatusCreated {
		t.Fatalf("create session: %d %s", code, body)
	}
	if code, body := request(t, "POST", base+"/v1/sessions/s1/turns", "tok", `{"input":"call the server"}`); code != http.StatusOK {
		t.Fatalf("turn: %d %s", code, body)
	}
	if _, hist := request(t, "GET", base+"/v1/sessions/s1/history", "tok", ""); !strings.Contains(hist, "echo: authorized") {
		t.Errorf("the history lacks the tool's result:\n%s", hist)
	}
}

// followAuthorization is the user's browser: it opens the authorization
// URL, stops at the redirect to the loopback listener, then opens that.
func followAuthorization(t *testing.T, authURL string) {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "http://127.0.0.1:") {
		t.Fatalf("authorization URL: %s to %q, want a redirect to the loopback listener", resp.Status, loc)
	}
	back, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	_ = back.Body.Close()
	if back.StatusCode != http.StatusOK {
		t.Fatalf("the loopback listener answered %s", back.Status)
	}
}

// waitFor polls cond until it holds, or fails when the test's context
// ends.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-t.Context().Done():
			t.Fatalf("never: %s", what)
		}
	}
}

// TestReadyOrPending stops waiting for a server as soon as its
// authorization is pending, not for another server's, and the warning
// says where to authorize it.
func TestReadyOrPending(t *testing.T) {
	pa := &mcp.PendingAuthorizer{}
	blocked := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	done := make(chan error, 1)
	go func() { done <- readyOrPending(t.Context(), blocked, pa, "saas") }()

	other, err := pa.RedirectURL(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	octx, ocancel := context.WithCancel(t.Context())
	defer ocancel()
	go func() {
		_, _ = pa.Authorize(octx, mcp.AuthorizationRequest{Server: "other", URL: "https://as.example/a?state=o", RedirectURL: other})
	}()
	waitChanged(t, pa, 1)
	select {
	case err := <-done:
		t.Fatalf("stopped waiting on another server's authorization: %v", err)
	default:
	}

	redirect, err := pa.RedirectURL(t.Context(), "saas")
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(t.Context())
	defer scancel()
	go func() {
		_, _ = pa.Authorize(sctx, mcp.AuthorizationRequest{Server: "saas", URL: "https://as.example/a?state=s", RedirectURL: redirect})
	}()
	if err := <-done; !errors.Is(err, errAwaitingAuthorization) {
		t.Fatalf("readyOrPending = %v, want errAwaitingAuthorization", err)
	}
	msg := (&mcpStartError{Server: "saas", Timeout: time.Second, Err: errAwaitingAuthorization}).Error()
	if !strings.Contains(msg, "mcp server saas waits for a user to authorize agcore") || !strings.Contains(msg, "GET /v1/mcp/authorizations") {
		t.Errorf("warning %q does not say where to authorize", msg)
	}
}

// waitChanged waits until pa lists n authorizations.
func waitChanged(t *testing.T, pa *mcp.PendingAuthorizer, n int) {
	t.Helper()
	for {
		changed := pa.Changed()
		if len(pa.Pending()) == n {
			return
		}
		select {
		case <-changed:
		case <-t.Context().Done():
			t.Fatalf("never %d pending: %+v", n, pa.Pending())
		}
	}
}
