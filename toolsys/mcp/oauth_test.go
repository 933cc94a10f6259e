package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/toolsys/mcp"
)

// oauthConfig is a ServerConfig for o's server with the loopback
// authorizer driven by a scripted browser and tokens in dir.
func oauthConfig(t *testing.T, o *oauthServer, dir string, out *bytes.Buffer) mcp.ServerConfig {
	return mcp.ServerConfig{Name: "protected", URL: o.URL(), OAuth: &mcp.OAuthConfig{
		Store:      &mcp.FileTokenStore{Dir: dir},
		Authorizer: &mcp.LoopbackAuthorizer{Out: out, Open: browser(t)},
	}}
}

func callWhoami(t *testing.T, c *mcp.Client) {
	t.Helper()
	res, err := c.CallTool(t.Context(), "whoami", nil)
	if err != nil {
		t.Fatalf("call whoami: %v", err)
	}
	if res.IsError {
		t.Fatalf("call whoami: error result %+v", res.Content)
	}
}

// TestOAuth_AuthorizesOnceAndStoresTheToken runs the whole flow on the
// first connection (registration, PKCE, resource indicator, redirect to
// the loopback listener) and none on the second, which uses the stored
// token: a file of mode 0600.
func TestOAuth_AuthorizesOnceAndStoresTheToken(t *testing.T) {
	o := newOAuthServer(t)
	dir := filepath.Join(t.TempDir(), "tokens")
	var out bytes.Buffer
	red := redact.New()
	cfg := oauthConfig(t, o, dir, &out)
	cfg.OAuth.Redactor = red
	c := connect(t, cfg)
	callWhoami(t, c)
	if reg, authz, codes, _ := o.counts(); reg != 1 || authz != 1 || codes != 1 {
		t.Fatalf("registrations, authorizations, code exchanges = %d, %d, %d; want 1 each", reg, authz, codes)
	}
	q := o.authorizeQueries[0]
	if q.Get("resource") != o.URL() {
		t.Errorf("resource indicator = %q, want the server URL %q", q.Get("resource"), o.URL())
	}
	if !strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") {
		t.Errorf("redirect_uri = %q, want the loopback listener on 127.0.0.1", q.Get("redirect_uri"))
	}
	if !strings.Contains(out.String(), "/authorize?") {
		t.Errorf("the authorization URL was not shown; output:\n%s", out.String())
	}

	path := filepath.Join(dir, "protected.json")
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %04o, want %04o", p, st.Mode().Perm(), want)
		}
	}
	var rec mcp.TokenRecord
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.ServerURL != o.URL() || rec.Token == nil || rec.Token.RefreshToken == "" {
		t.Errorf("stored record %+v, want the server URL and a refresh token", rec)
	}
	if got := red.String("token " + rec.Token.AccessToken + " refresh " + rec.Token.RefreshToken); strings.Contains(got, rec.Token.AccessToken) || strings.Contains(got, rec.Token.RefreshToken) {
		t.Errorf("the redactor does not mask the tokens: %q", got)
	}

	// A new connection (a restart) reuses the stored token.
	c2 := connect(t, oauthConfig(t, o, dir, &out))
	callWhoami(t, c2)
	if reg, authz, _, _ := o.counts(); reg != 1 || authz != 1 {
		t.Errorf("after a restart: registrations, authorizations = %d, %d; want 1, 1 (the stored token)", reg, authz)
	}
}

// TestOAuth_RefreshesAnExpiringToken refreshes a token that is about to
// expire before using it, with no new authorization, and stores the new
// one.
func TestOAuth_RefreshesAnExpiringToken(t *testing.T) {
	o := newOAuthServer(t)
	o.expiresIn = 1 // within the refresh margin: every use refreshes first
	dir := t.TempDir()
	var out bytes.Buffer
	c := connect(t, oauthConfig(t, o, dir, &out))
	callWhoami(t, c)
	callWhoami(t, c)
	_, authz, _, refreshes := o.counts()
	if authz != 1 || refreshes == 0 {
		t.Fatalf("authorizations, refreshes = %d, %d; want 1 authorization and refreshes", authz, refreshes)
	}
	rec, err := (&mcp.FileTokenStore{Dir: dir}).Load("protected")
	if err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	last := o.bearers[len(o.bearers)-1]
	o.mu.Unlock()
	if rec.Token.AccessToken != last {
		t.Errorf("stored access token %q, want the last one used, %q", rec.Token.AccessToken, last)
	}
}

// TestOAuth_RevokedToken authorizes again when the stored access and
// refresh tokens were revoked, and fails with ErrAuthorizationRequired
// when no one can authorize.
func TestOAuth_RevokedToken(t *testing.T) {
	o := newOAuthServer(t)
	dir := t.TempDir()
	var out bytes.Buffer
	c := connect(t, oauthConfig(t, o, dir, &out))
	callWhoami(t, c)
	_ = c.Close()
	o.revokeAll()

	headless := mcp.ServerConfig{Name: "protected", URL: o.URL(), OAuth: &mcp.OAuthConfig{Store: &mcp.FileTokenStore{Dir: dir}}}
	_, err := mcp.Connect(t.Context(), headless, mcp.Options{})
	if !errors.Is(err, mcp.ErrAuthorizationRequired) {
		t.Fatalf("Connect without an authorizer after revocation: %v, want ErrAuthorizationRequired", err)
	}
	if !strings.Contains(err.Error(), "agcore mcp test protected") {
		t.Errorf("error %q does not say how to authorize", err)
	}

	c2 := connect(t, oauthConfig(t, o, dir, &out))
	callWhoami(t, c2)
	if _, authz, _, _ := o.counts(); authz != 2 {
		t.Errorf("authorizations = %d, want 2 (the revoked token replaced)", authz)
	}
}

// TestOAuth_TokenForAnotherServerIsNotSent never sends a token stored for
// another URL (a renamed or moved server): it authorizes for this one.
func TestOAuth_TokenForAnotherServerIsNotSent(t *testing.T) {
	a, b := newOAuthServer(t), newOAuthServer(t)
	dir := t.TempDir()
	var out bytes.Buffer
	ca := connect(t, oauthConfig(t, a, dir, &out))
	callWhoami(t, ca)
	_ = ca.Close()
	recA, err := (&mcp.FileTokenStore{Dir: dir}).Load("protected")
	if err != nil {
		t.Fatal(err)
	}

	cb := connect(t, oauthConfig(t, b, dir, &out)) // same name, other URL
	callWhoami(t, cb)
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, tok := range b.bearers {
		if tok == recA.Token.AccessToken {
			t.Fatalf("server b received the token issued for server a")
		}
	}
	if b.authorizations != 1 || b.authorizeQueries[0].Get("resource") != b.URL() {
		t.Errorf("server b: %d authorizations, resource %q; want 1 for %q", b.authorizations, b.authorizeQueries[0].Get("resource"), b.URL())
	}
}

// TestOAuth_WrongAudienceRejected: the resource server refuses a token
// issued for another resource, so the client authorizes again for its
// own URL rather than failing.
func TestOAuth_WrongAudienceRejected(t *testing.T) {
	o := newOAuthServer(t)
	dir := t.TempDir()
	o.mu.Lock()
	o.clients["client-x"] = true
	o.access["foreign-token-12345"] = grant{resource: "https://elsewhere.example/mcp", scopes: []string{"read"}}
	o.mu.Unlock()
	store := &mcp.FileTokenStore{Dir: dir}
	if err := store.Save("protected", mcp.TokenRecord{ServerURL: o.URL(), ClientID: "client-x", TokenURL: o.srv.URL + "/token",
		Token: tokenFor("foreign-token-12345")}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := connect(t, oauthConfig(t, o, dir, &out))
	callWhoami(t, c)
	if _, authz, _, _ := o.counts(); authz != 1 {
		t.Errorf("authorizations = %d, want 1: the foreign token was refused", authz)
	}
	rec, _ := store.Load("protected")
	if rec.Token.AccessToken == "foreign-token-12345" {
		t.Errorf("the refused token is still stored")
	}
}

// TestOAuth_StepUp authorizes again, with the scopes granted before and
// the ones asked for, when a call is refused with insufficient_scope.
func TestOAuth_StepUp(t *testing.T) {
	o := newOAuthServer(t)
	o.callScope = "write"
	var out bytes.Buffer
	c := connect(t, oauthConfig(t, o, t.TempDir(), &out))
	callWhoami(t, c)
	if _, authz, _, _ := o.counts(); authz != 2 {
		t.Fatalf("authorizations = %d, want 2 (connect, then step-up)", authz)
	}
	scopes := strings.Fields(o.authorizeQueries[1].Get("scope"))
	for _, want := range []string{"read", "write"} {
		if !slicesContains(scopes, want) {
			t.Errorf("step-up asked for scopes %v, want %q among them", scopes, want)
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestConn_AuthorizationRequiredGivesUpAtOnce stops a supervised
// connection at the first attempt when the server needs an authorization
// no one can give, instead of retrying: the reason names the command that
// authorizes.
func TestConn_AuthorizationRequiredGivesUpAtOnce(t *testing.T) {
	o := newOAuthServer(t)
	conn, err := mcp.NewConn(mcp.ServerConfig{Name: "protected", URL: o.URL(), OAuth: &mcp.OAuthConfig{}},
		mcp.ConnOptions{MaxFailures: -1})
	if err != nil {
		t.Fatal(err)
	}
	conn.Start(t.Context())
	defer conn.Close()
	// The bound only turns a connection that keeps retrying into a failure.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err = conn.Ready(ctx)
	if !errors.Is(err, mcp.ErrAuthorizationRequired) || !errors.Is(err, mcp.ErrGaveUp) {
		t.Fatalf("Ready = %v, want ErrGaveUp and ErrAuthorizationRequired", err)
	}
	if st := conn.Status(); st.State != mcp.StateFailed || st.Failures > 1 {
		t.Errorf("status %+v, want failed after one attempt", st)
	}
	if _, authz, _, _ := o.counts(); authz != 0 {
		t.Errorf("authorizations = %d, want none", authz)
	}
}

// TestOAuth_ClientCredentials authenticates a service with its client id
// and secret, with no user and no authorizer, and keeps getting tokens
// after the connection's start has returned.
func TestOAuth_ClientCredentials(t *testing.T) {
	o := newOAuthServer(t)
	o.expiresIn = 1 // each use needs a new token
	red := redact.New()
	c := connect(t, mcp.ServerConfig{Name: "svc", URL: o.URL(), OAuth: &mcp.OAuthConfig{
		Grant: mcp.GrantClientCredentials, ClientID: "svc", ClientSecret: "svc-secret", Redactor: red}})
	callWhoami(t, c)
	callWhoami(t, c)
	o.mu.Lock()
	grants, authz, last := o.clientGrants, o.authorizations, o.bearers[len(o.bearers)-1]
	o.mu.Unlock()
	if grants < 2 || authz != 0 {
		t.Errorf("client-credentials grants, authorizations = %d, %d; want a new grant per use and no authorization", grants, authz)
	}
	if got := red.String("secret svc-secret token " + last); strings.Contains(got, "svc-secret") || strings.Contains(got, last) {
		t.Errorf("not masked: %q", got)
	}
	_, err := mcp.Connect(t.Context(), mcp.ServerConfig{Name: "svc", URL: o.URL(), OAuth: &mcp.OAuthConfig{Grant: mcp.GrantClientCredentials, ClientID: "svc"}}, mcp.Options{})
	if !errors.Is(err, mcp.ErrInvalidConfig) || !strings.Contains(err.Error(), "needs ClientID and ClientSecret") {
		t.Errorf("client credentials without a secret: %v", err)
	}
}

// TestOAuth_ConcurrentRefusalsAuthorizeOnce runs one authorization when
// two calls are refused together: the second waits for the first and
// retries with its token, so the user is not sent to the browser twice.
func TestOAuth_ConcurrentRefusalsAuthorizeOnce(t *testing.T) {
	o := newOAuthServer(t)
	var out bytes.Buffer
	cfg := oauthConfig(t, o, t.TempDir(), &out)
	c := connect(t, cfg)
	callWhoami(t, c)
	// Both calls are refused before the first authorization goes on.
	refused := make(chan struct{}, 2)
	o.mu.Lock()
	o.onUnauthorized = func(method string) {
		if method == "tools/call" {
			refused <- struct{}{}
		}
	}
	o.mu.Unlock()
	open := cfg.OAuth.Authorizer.(*mcp.LoopbackAuthorizer).Open
	cfg.OAuth.Authorizer.(*mcp.LoopbackAuthorizer).Open = func(u string) error {
		<-refused
		<-refused
		return open(u)
	}
	o.revokeAll()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := c.CallTool(t.Context(), "whoami", nil)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, authz, _, _ := o.counts(); authz != 2 {
		t.Errorf("authorizations = %d, want 2 (connect, then one for both calls)", authz)
	}
}
