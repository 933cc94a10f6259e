package mcp_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
)

// oauthServer is an MCP server behind OAuth in one process: its own
// authorization server (metadata, dynamic registration, authorization
// with PKCE, tokens and refresh) and a resource server at /mcp that
// accepts only live tokens issued for its URL, with the scopes it asks.
type oauthServer struct {
	t   *testing.T
	srv *httptest.Server

	mu sync.Mutex
	// expiresIn is the lifetime announced for access tokens, in seconds.
	expiresIn int
	// callScope, when set, is the scope tools/call needs besides "read"
	// (a step-up).
	callScope string
	clients   map[string]bool
	codes     map[string]codeGrant
	access    map[string]grant
	refresh   map[string]grant
	n         int
	// seen counts what the server received.
	registrations, authorizations, codeExchanges, refreshes, clientGrants int
	// authorizeQueries are the queries of the authorization requests.
	authorizeQueries []url.Values
	// bearers are the tokens presented at /mcp, in order.
	bearers []string
	// onUnauthorized, when set, is called with the method of each request
	// refused with 401 (after the answer is written).
	onUnauthorized func(method string)
}

type codeGrant struct {
	challenge, resource, client, redirect string
	scopes                                []string
}

type grant struct {
	resource string
	scopes   []string
	revoked  bool
}

func newOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	o := &oauthServer{t: t, expiresIn: 3600, clients: map[string]bool{}, codes: map[string]codeGrant{},
		access: map[string]grant{}, refresh: map[string]grant{}}
	mcpServer := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(mcpServer, &sdk.Tool{Name: "whoami", Description: "says hello"},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello"}}}, nil, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpServer }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", o.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", o.serverMetadata)
	mux.HandleFunc("POST /register", o.register)
	mux.HandleFunc("GET /authorize", o.authorize)
	mux.HandleFunc("POST /token", o.token)
	mux.Handle("/mcp", o.protect(mcpHandler))
	o.srv = httptest.NewServer(mux)
	t.Cleanup(o.srv.Close)
	return o
}

// URL is the MCP endpoint.
func (o *oauthServer) URL() string { return o.srv.URL + "/mcp" }

func (o *oauthServer) metadataURL() string {
	return o.srv.URL + "/.well-known/oauth-protected-resource/mcp"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (o *oauthServer) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, map[string]any{"resource": o.URL(), "authorization_servers": []string{o.srv.URL},
		"scopes_supported": []string{"read", "write"}})
}

func (o *oauthServer) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, map[string]any{
		"issuer":                                o.srv.URL,
		"authorization_endpoint":                o.srv.URL + "/authorize",
		"token_endpoint":                        o.srv.URL + "/token",
		"registration_endpoint":                 o.srv.URL + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported":                      []string{"read", "write", "offline_access"},
	})
}

func (o *oauthServer) next(prefix string) string {
	o.n++
	// The server's address makes the values of two servers differ.
	return fmt.Sprintf("%s-%d-%s", prefix, o.n, strings.TrimPrefix(o.srv.URL, "http://127.0.0.1:"))
}

func (o *oauthServer) register(w http.ResponseWriter, r *http.Request) {
	var md struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
		writeJSON(w, 400, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.registrations++
	id := o.next("client")
	o.clients[id] = true
	writeJSON(w, 201, map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": "none"})
}

func (o *oauthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.authorizations++
	o.authorizeQueries = append(o.authorizeQueries, q)
	switch {
	case q.Get("response_type") != "code", !o.clients[q.Get("client_id")]:
		http.Error(w, "bad client or response type", 400)
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "PKCE S256 required", 400)
		return
	}
	code := o.next("code")
	o.codes[code] = codeGrant{challenge: q.Get("code_challenge"), resource: q.Get("resource"), client: q.Get("client_id"),
		redirect: q.Get("redirect_uri"), scopes: strings.Fields(q.Get("scope"))}
	back, _ := url.Parse(q.Get("redirect_uri"))
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (o *oauthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, 400, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	o.mu.Lock()
	defer o.mu.Unlock()
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		o.codeExchanges++
		c, ok := o.codes[f.Get("code")]
		delete(o.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok, c.client != f.Get("client_id"), c.redirect != f.Get("redirect_uri"):
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier does not match"})
			return
		case f.Get("resource") != c.resource:
			writeJSON(w, 400, map[string]string{"error": "invalid_target"})
			return
		}
		g = grant{resource: c.resource, scopes: c.scopes}
	case "refresh_token":
		o.refreshes++
		old, ok := o.refresh[f.Get("refresh_token")]
		if !ok || old.revoked {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "refresh token revoked"})
			return
		}
		delete(o.refresh, f.Get("refresh_token"))
		g = grant{resource: old.resource, scopes: old.scopes}
	case "client_credentials":
		o.clientGrants++
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = f.Get("client_id"), f.Get("client_secret")
		}
		if id != "svc" || secret != "svc-secret" {
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
			return
		}
		g = grant{resource: o.URL(), scopes: strings.Fields(f.Get("scope"))}
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	// A new token replaces the ones issued before for the same resource.
	for k, v := range o.access {
		if v.resource == g.resource {
			v.revoked = true
			o.access[k] = v
		}
	}
	at, rt := o.next("access"), o.next("refresh")
	o.access[at], o.refresh[rt] = g, g
	writeJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": o.expiresIn,
		"refresh_token": rt, "scope": strings.Join(g.scopes, " ")})
}

// protect lets through requests with a live token issued for this server
// with the scopes the request needs.
func (o *oauthServer) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		if tok != "" {
			o.bearers = append(o.bearers, tok)
		}
		g, ok := o.access[tok]
		need := []string{"read"}
		if msg.Method == "tools/call" && o.callScope != "" {
			need = append(need, o.callScope)
		}
		onUnauthorized := o.onUnauthorized
		o.mu.Unlock()
		challenge := fmt.Sprintf(`Bearer resource_metadata=%q, scope="read"`, o.metadataURL())
		switch {
		case !ok || g.revoked || g.resource != o.URL():
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "invalid token", http.StatusUnauthorized)
			if onUnauthorized != nil {
				onUnauthorized(msg.Method)
			}
			return
		case !slices.Contains(g.scopes, "read"):
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "invalid token", http.StatusUnauthorized)
			return
		}
		for _, s := range need {
			if !slices.Contains(g.scopes, s) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`,
					strings.Join(need, " "), o.metadataURL()))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// revokeAll revokes every access and refresh token.
func (o *oauthServer) revokeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, v := range o.access {
		v.revoked = true
		o.access[k] = v
	}
	for k, v := range o.refresh {
		v.revoked = true
		o.refresh[k] = v
	}
}

// counts returns registrations, authorizations, code exchanges and
// refreshes.
func (o *oauthServer) counts() (reg, authz, codes, refreshes int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.registrations, o.authorizations, o.codeExchanges, o.refreshes
}

// browser is what a user's browser does with an authorization URL: it
// follows the redirects, to the loopback listener in the end.
func browser(t *testing.T) func(string) error {
	return func(u string) error {
		resp, err := http.Get(u)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("browser: %s: %s", resp.Status, b)
		}
		return nil
	}
}

func tokenFor(access string) *oauth2.Token {
	return &oauth2.Token{AccessToken: access, TokenType: "Bearer"}
}
