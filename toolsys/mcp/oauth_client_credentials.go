package mcp

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// clientCredentials is the SDK's client-credentials handler, run on a
// context that outlives the request that asked for authorization: its
// token source keeps that context for every later token request.
type clientCredentials struct {
	inner *extauth.ClientCredentialsHandler
	learn func(...string)
}

// newClientCredentials returns the handler of the client-credentials
// grant.
func newClientCredentials(cfg ServerConfig) (*clientCredentials, error) {
	oc := cfg.OAuth
	client := oc.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	inner, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: oc.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: oc.ClientSecret}},
		HTTPClient:  client,
	})
	if err != nil {
		return nil, &ServerError{Server: cfg.Name, Op: "oauth", Err: err}
	}
	red := oc.Redactor
	learn := func(values ...string) { learnSecrets(red, values...) }
	learn(oc.ClientSecret)
	return &clientCredentials{inner: inner, learn: learn}, nil
}

// TokenSource implements auth.OAuthHandler; the tokens it gives are
// added to the redactor.
func (c *clientCredentials) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	ts, err := c.inner.TokenSource(ctx)
	if ts == nil || err != nil {
		return ts, err
	}
	return &learningSource{base: ts, learn: c.learn}, nil
}

// Authorize implements auth.OAuthHandler.
func (c *clientCredentials) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	return c.inner.Authorize(context.WithoutCancel(ctx), req, resp)
}

// learningSource tells the redactor about each new token it returns.
type learningSource struct {
	base  oauth2.TokenSource
	learn func(...string)

	mu   sync.Mutex
	last string
}

// Token implements oauth2.TokenSource.
func (l *learningSource) Token() (*oauth2.Token, error) {
	tok, err := l.base.Token()
	if err != nil || tok == nil {
		return tok, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if tok.AccessToken != l.last {
		l.last = tok.AccessToken
		l.learn(tok.AccessToken, tok.RefreshToken)
	}
	return tok, nil
}
