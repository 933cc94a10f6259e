package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/rs/zerolog"
	"golang.org/x/oauth2"

	"github.com/agcore/agcore/redact"
)

// ErrAuthorizationRequired is wrapped by the error of a connection to an
// OAuth-protected server that needs a user to authorize agcore when no
// Authorizer is configured (a server process with no one to ask).
var ErrAuthorizationRequired = errors.New("the server needs authorization and no one can authorize it here")

// OAuthConfig enables the MCP authorization flow for an HTTP server: OAuth
// 2.1 with PKCE, the protected-resource metadata named by the server's
// WWW-Authenticate challenge, the authorization server's metadata, dynamic
// client registration when ClientID is empty, the server's URL as the
// resource indicator, refresh, and scope step-up on insufficient_scope.
// The zero value registers a public client dynamically.
type OAuthConfig struct {
	// ClientID is a client registered in advance with the authorization
	// server. Empty means dynamic client registration.
	ClientID string `json:"client_id,omitempty" yaml:"client_id,omitempty"`
	// ClientSecret goes with ClientID for a confidential client. Empty
	// means a public client.
	ClientSecret string `json:"-" yaml:"-"`
	// ClientMetadataURL is the https URL of a client ID metadata document
	// agcore is known by, used when the authorization server supports
	// them. Empty means none.
	ClientMetadataURL string `json:"client_metadata_url,omitempty" yaml:"client_metadata_url,omitempty"`
	// Scopes are asked for besides those the server's challenge or
	// metadata names. Empty means only those.
	Scopes []string `json:"scopes,omitempty" yaml:"scopes,omitempty"`
	// Grant is the OAuth grant: GrantAuthorizationCode (the default when
	// empty: a user authorizes, interactively) or GrantClientCredentials
	// (a service authenticates with ClientID and ClientSecret, no user;
	// its tokens are obtained again rather than stored).
	Grant string `json:"grant,omitempty" yaml:"grant,omitempty"`

	// Store keeps the tokens and the client registration between runs.
	// Nil keeps them in memory for the life of the Conn.
	Store TokenStore `json:"-" yaml:"-"`
	// Authorizer carries out the interactive step. Nil means no one can
	// authorize: a server that needs it fails with
	// ErrAuthorizationRequired, and stored tokens are still used and
	// refreshed.
	Authorizer Authorizer `json:"-" yaml:"-"`
	// HTTPClient makes the requests of the flow (metadata, registration,
	// token). Nil means http.DefaultClient.
	HTTPClient *http.Client `json:"-" yaml:"-"`
	// Redactor, when set, learns every token and client secret obtained,
	// so that none can reach a log line.
	Redactor *redact.Redactor `json:"-" yaml:"-"`
}

// The grants of OAuthConfig.Grant.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// validate reports what cannot work in o, naming the field.
func (o *OAuthConfig) validate() error {
	switch o.Grant {
	case "", GrantAuthorizationCode:
	case GrantClientCredentials:
		if o.ClientID == "" || o.ClientSecret == "" {
			return errors.New("OAuth.Grant client_credentials needs ClientID and ClientSecret")
		}
	default:
		return fmt.Errorf("OAuth.Grant %q: want %s or %s", o.Grant, GrantAuthorizationCode, GrantClientCredentials)
	}
	return nil
}

// AuthorizationRequest is what an Authorizer shows the user.
type AuthorizationRequest struct {
	// Server is the MCP server's configured name.
	Server string
	// URL is the authorization URL to open in a browser.
	URL string
	// RedirectURL is where the authorization server sends the browser
	// back; it is the one RedirectURL returned.
	RedirectURL string
}

// AuthorizationResult is the authorization server's answer, read from the
// query of the redirect.
type AuthorizationResult struct {
	// Code is the authorization code.
	Code string
	// State is the state parameter, checked against the request's.
	State string
	// Iss is the issuer parameter (RFC 9207), when present.
	Iss string
}

// Authorizer carries out the interactive step of the authorization flow:
// it sends a user to the authorization URL and returns what the
// authorization server redirected back with. Implementations must be safe
// for concurrent use.
type Authorizer interface {
	// RedirectURL returns the redirect URI to register and send for
	// server.
	RedirectURL(ctx context.Context, server string) (string, error)
	// Authorize shows the user req.URL and waits for the redirect, until
	// ctx ends.
	Authorize(ctx context.Context, req AuthorizationRequest) (AuthorizationResult, error)
}

// oauthHandler implements auth.OAuthHandler for one server on top of the
// SDK's authorization-code handler: it starts from the stored token,
// saves every token it obtains or refreshes, and builds the SDK handler
// when a first authorization is needed (with the Authorizer's redirect
// URL), then keeps it so that a step-up keeps the scopes granted before.
type oauthHandler struct {
	server, url string
	cfg         OAuthConfig
	log         zerolog.Logger

	// authMu lets one authorization run at a time: requests refused
	// together wait for it, then retry with its token.
	authMu sync.Mutex

	mu     sync.Mutex
	inner  *auth.AuthorizationCodeHandler
	ts     oauth2.TokenSource
	scopes []string // granted before, from the store
}

var _ auth.OAuthHandler = (*oauthHandler)(nil)

// newOAuthHandler loads the stored token of cfg's server, if any.
func newOAuthHandler(cfg ServerConfig, log zerolog.Logger) (*oauthHandler, error) {
	oc := *cfg.OAuth
	if oc.Store == nil {
		oc.Store = NewMemoryTokenStore()
	}
	if oc.HTTPClient == nil {
		oc.HTTPClient = http.DefaultClient
	}
	h := &oauthHandler{server: cfg.Name, url: cfg.URL, cfg: oc, log: log}
	rec, err := oc.Store.Load(cfg.Name)
	switch {
	case errors.Is(err, ErrNoToken):
	case err != nil:
		return nil, &ServerError{Server: cfg.Name, Op: "load oauth token", Err: err}
	case rec.ServerURL != cfg.URL:
		// A token is bound to the resource it was issued for: one for
		// another URL is never sent here.
		log.Info().Msg("mcp: stored oauth token is for another URL; authorizing again")
	default:
		h.learn(rec.ClientSecret, rec.Token.AccessToken, rec.Token.RefreshToken)
		h.scopes = rec.Scopes
		h.ts = h.persisting(rec.config(), rec.Token)
	}
	return h, nil
}

// TokenSource implements auth.OAuthHandler.
func (h *oauthHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

// Authorize implements auth.OAuthHandler: it runs the flow after a 401, or
// a 403 with insufficient_scope.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.authMu.Lock()
	defer h.authMu.Unlock()
	if h.tokenChangedSince(req) {
		// Another request was authorized meanwhile: retry with its token.
		_ = resp.Body.Close()
		return nil
	}
	h.mu.Lock()
	inner := h.inner
	h.mu.Unlock()
	if inner == nil {
		var err error
		if inner, err = h.newInner(ctx); err != nil {
			_ = resp.Body.Close()
			return err
		}
		h.mu.Lock()
		h.inner = inner
		h.mu.Unlock()
	}
	h.log.Info().Int("status", resp.StatusCode).Msg("mcp: authorizing with the server's authorization server")
	if err := inner.Authorize(ctx, req, resp); err != nil {
		return fmt.Errorf("mcp server %s: authorization: %w", h.server, err)
	}
	ts, err := inner.TokenSource(ctx)
	if err != nil {
		return fmt.Errorf("mcp server %s: authorization: %w", h.server, err)
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return nil
}

// tokenChangedSince reports whether the current token differs from the
// one req was sent with.
func (h *oauthHandler) tokenChangedSince(req *http.Request) bool {
	h.mu.Lock()
	ts := h.ts
	h.mu.Unlock()
	if ts == nil {
		return false
	}
	tok, err := ts.Token()
	if err != nil || tok == nil || tok.AccessToken == "" {
		return false
	}
	return req.Header.Get("Authorization") != "Bearer "+tok.AccessToken
}

// newInner builds the SDK handler, with the Authorizer's redirect URL.
func (h *oauthHandler) newInner(ctx context.Context) (*auth.AuthorizationCodeHandler, error) {
	if h.cfg.Authorizer == nil {
		return nil, fmt.Errorf("mcp server %s: %w: authorize it once on a terminal with `agcore mcp test %s` (the token is stored for later runs)",
			h.server, ErrAuthorizationRequired, h.server)
	}
	redirect, err := h.cfg.Authorizer.RedirectURL(ctx, h.server)
	if err != nil {
		return nil, fmt.Errorf("mcp server %s: redirect URL: %w", h.server, err)
	}
	ac := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			res, err := h.cfg.Authorizer.Authorize(ctx, AuthorizationRequest{Server: h.server, URL: args.URL, RedirectURL: redirect})
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: res.Code, State: res.State, Iss: res.Iss}, nil
		},
		ScopeFilter:         h.scopeFilter,
		RequestRefreshToken: true,
		Client:              h.cfg.HTTPClient,
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			return h.persisting(oc, tok), nil
		},
	}
	if h.cfg.ClientMetadataURL != "" {
		ac.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.cfg.ClientMetadataURL}
	}
	if h.cfg.ClientID != "" {
		ac.PreregisteredClient = &oauthex.ClientCredentials{ClientID: h.cfg.ClientID}
		if h.cfg.ClientSecret != "" {
			ac.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.cfg.ClientSecret}
		}
	} else {
		ac.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              "agcore",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	inner, err := auth.NewAuthorizationCodeHandler(ac)
	if err != nil {
		return nil, fmt.Errorf("mcp server %s: oauth: %w", h.server, err)
	}
	return inner, nil
}

// scopeFilter adds the configured scopes and those granted in an earlier
// run to the scopes the server asks for, so that a step-up after a
// restart loses nothing.
func (h *oauthHandler) scopeFilter(discovered []string) []string {
	h.mu.Lock()
	prior := h.scopes
	h.mu.Unlock()
	out := slices.Clone(discovered)
	for _, s := range slices.Concat(h.cfg.Scopes, prior) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// persisting returns a token source over tok that refreshes with oc and
// stores every new token.
func (h *oauthHandler) persisting(oc *oauth2.Config, tok *oauth2.Token) oauth2.TokenSource {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, h.cfg.HTTPClient)
	ps := &persistingSource{h: h, oc: oc, base: oc.TokenSource(ctx, tok)}
	ps.save(tok)
	return ps
}

// learn tells the redactor about credentials.
func (h *oauthHandler) learn(values ...string) { learnSecrets(h.cfg.Redactor, values...) }

// learnSecrets adds values to r, when there is one.
func learnSecrets(r *redact.Redactor, values ...string) {
	if r == nil {
		return
	}
	for _, v := range values {
		r.Add(v, "")
	}
}

// persistingSource stores each token its base source returns for the
// first time: the one obtained, and each refreshed one.
type persistingSource struct {
	h    *oauthHandler
	oc   *oauth2.Config
	base oauth2.TokenSource

	mu   sync.Mutex
	last string
}

// Token implements oauth2.TokenSource.
func (p *persistingSource) Token() (*oauth2.Token, error) {
	tok, err := p.base.Token()
	if err != nil {
		return nil, err
	}
	p.save(tok)
	return tok, nil
}

// save stores tok unless it is the one stored last.
func (p *persistingSource) save(tok *oauth2.Token) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if tok == nil || tok.AccessToken == p.last {
		return
	}
	p.last = tok.AccessToken
	h := p.h
	h.learn(p.oc.ClientSecret, tok.AccessToken, tok.RefreshToken)
	rec := newTokenRecord(h.url, p.oc, tok)
	h.mu.Lock()
	h.scopes = rec.Scopes
	h.mu.Unlock()
	if err := h.cfg.Store.Save(h.server, rec); err != nil {
		h.log.Warn().Err(err).Msg("mcp: the oauth token could not be stored; it is kept in memory")
		return
	}
	h.log.Debug().Msg("mcp: oauth token stored")
}
