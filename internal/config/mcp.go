package config

// This file holds the credentials of MCP servers: <secret_ref:NAME>
// placeholders in headers and bearer_token, checked by Validate and
// resolved by Build from the environment variables AGCORE_SECRET_NAME.

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// ErrSecretUnset is matched by the error Build returns when a
// <secret_ref:NAME> placeholder of an MCP server names a secret whose
// variable AGCORE_SECRET_NAME is empty or unset.
var ErrSecretUnset = errors.New("secret not set")

// validateMCPCredentials checks the placeholders of s's headers and
// bearer_token: well formed, and bearer_token nothing but one.
func validateMCPCredentials(ps *problems, key string, s MCPServer) {
	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
		if _, err := toolsys.ParseSecretRefs(s.Headers[name]); err != nil {
			ps.add(key+".headers."+name, "%v", err)
		}
	}
	validateMCPOAuth(ps, key, s)
	if s.BearerToken == "" {
		return
	}
	if s.BearerTokenEnv != "" {
		ps.add(key+".bearer_token", "set bearer_token or bearer_token_env, not both")
	}
	refs, err := toolsys.ParseSecretRefs(s.BearerToken)
	if err != nil || len(refs) != 1 || refs[0].Start != 0 || refs[0].End != len(s.BearerToken) {
		ps.add(key+".bearer_token", "want a <secret_ref:NAME> placeholder (the secret in %sNAME), never the token itself", toolsys.DefaultSecretEnvPrefix)
	}
}

// resolveSecretRefs replaces the placeholders of s's headers and
// bearer_token in sc with the secrets' values.
func (s MCPServer) resolveSecretRefs(sc *mcp.ServerConfig, getenv func(string) string) error {
	if len(s.Headers) > 0 {
		sc.Headers = make(map[string]string, len(s.Headers))
		for name, v := range s.Headers {
			resolved, _, err := resolveRefs(v, getenv)
			if err != nil {
				return fmt.Errorf("config: mcp server %s: headers.%s: %w", s.Name, name, err)
			}
			sc.Headers[name] = resolved
		}
	}
	if o := s.OAuth; o != nil {
		secret, _, err := resolveRefs(o.ClientSecret, getenv)
		if err != nil {
			return fmt.Errorf("config: mcp server %s: oauth.client_secret: %w", s.Name, err)
		}
		sc.OAuth = &mcp.OAuthConfig{ClientID: o.ClientID, ClientSecret: secret,
			ClientMetadataURL: o.ClientMetadataURL, Scopes: slices.Clone(o.Scopes), Grant: o.Grant}
	}
	if s.BearerToken != "" {
		tok, _, err := resolveRefs(s.BearerToken, getenv)
		if err != nil {
			return fmt.Errorf("config: mcp server %s: bearer_token: %w", s.Name, err)
		}
		sc.BearerToken = tok
	}
	return nil
}

// secretValues returns every value that s's placeholders resolve to, and
// the resolved header values that hold one, for the redactor. Values that
// do not resolve are left out: ServerConfig reports them.
func (s MCPServer) secretValues(getenv func(string) string) []string {
	var out []string
	for _, v := range s.Headers {
		resolved, secrets, err := resolveRefs(v, getenv)
		if err != nil || len(secrets) == 0 {
			continue
		}
		out = append(append(out, resolved), secrets...)
	}
	return out
}

// resolveRefs replaces the placeholders in v with the values of their
// variables AGCORE_SECRET_NAME. It returns the result and the values used.
// An error names the secret and the variable to set, never a value.
func resolveRefs(v string, getenv func(string) string) (string, []string, error) {
	refs, err := toolsys.ParseSecretRefs(v)
	if err != nil || len(refs) == 0 {
		return v, nil, err
	}
	var b strings.Builder
	var used []string
	last := 0
	for _, r := range refs {
		val := getenv(toolsys.DefaultSecretEnvPrefix + r.Name)
		if val == "" {
			return "", nil, fmt.Errorf("secret %s: set the environment variable %s%s: %w", r.Name, toolsys.DefaultSecretEnvPrefix, r.Name, ErrSecretUnset)
		}
		b.WriteString(v[last:r.Start])
		b.WriteString(val)
		used = append(used, val)
		last = r.End
	}
	b.WriteString(v[last:])
	return b.String(), used, nil
}

// MCPOAuth configures the MCP authorization flow of one HTTP server:
// OAuth 2.1 with PKCE, discovery from the server's challenge, dynamic
// client registration unless client_id is set, refresh and step-up. The
// tokens are stored in <data_dir>/mcp-oauth/<name>.json (mode 0600); the
// first authorization runs on a terminal, with `agcore mcp test NAME`.
type MCPOAuth struct {
	// ClientID is a client registered in advance with the authorization
	// server. Empty means dynamic client registration.
	ClientID string `yaml:"client_id"`
	// ClientSecret is a <secret_ref:NAME> placeholder for the secret of a
	// confidential ClientID. Empty means a public client.
	ClientSecret string `yaml:"client_secret"`
	// ClientMetadataURL is the https URL of a client ID metadata document
	// that describes agcore, used when the authorization server accepts
	// them. Empty means none.
	ClientMetadataURL string `yaml:"client_metadata_url"`
	// Scopes are asked for besides those the server names. Empty means
	// only those.
	Scopes []string `yaml:"scopes"`
	// Grant is authorization_code (a user authorizes; the default) or
	// client_credentials (agcore authenticates as a service with
	// client_id and client_secret, with no user, as serve may need).
	Grant string `yaml:"grant"`
}

// MCPTokenDir is the directory, under the data directory, of the MCP
// servers' OAuth tokens.
const MCPTokenDir = "mcp-oauth"

// mcpClient completes sc with s's sampling switch and what the process
// provides: the answerer of the server's questions and, for OAuth, the token store of the data
// directory, the authorizer and the redactor.
func (c *Config) mcpClient(s MCPServer, sc *mcp.ServerConfig, opts BuildOptions) {
	sc.Elicit = opts.MCPElicit
	sc.Sampling = s.Sampling
	if sc.OAuth == nil {
		return
	}
	if c.DataDir != "" {
		sc.OAuth.Store = &mcp.FileTokenStore{Dir: filepath.Join(c.DataDir, MCPTokenDir)}
	}
	sc.OAuth.Authorizer = opts.MCPAuthorizer
	sc.OAuth.Redactor = opts.Redactor
	opts.Redactor.Add(sc.OAuth.ClientSecret, "")
}

// validateMCPOAuth checks s's oauth block.
func validateMCPOAuth(ps *problems, key string, s MCPServer) {
	o := s.OAuth
	if o == nil {
		return
	}
	key += ".oauth"
	if s.BearerToken != "" || s.BearerTokenEnv != "" {
		ps.add(key, "set oauth or a bearer token, not both")
	}
	if o.ClientSecret != "" {
		refs, err := toolsys.ParseSecretRefs(o.ClientSecret)
		if err != nil || len(refs) != 1 || refs[0].Start != 0 || refs[0].End != len(o.ClientSecret) {
			ps.add(key+".client_secret", "want a <secret_ref:NAME> placeholder (the secret in %sNAME), never the secret itself", toolsys.DefaultSecretEnvPrefix)
		}
		if o.ClientID == "" {
			ps.add(key+".client_secret", "only with client_id")
		}
	}
	switch o.Grant {
	case "", mcp.GrantAuthorizationCode:
	case mcp.GrantClientCredentials:
		if o.ClientID == "" || o.ClientSecret == "" {
			ps.add(key+".grant", "client_credentials needs client_id and client_secret")
		}
	default:
		ps.add(key+".grant", "want %s or %s, got %q", mcp.GrantAuthorizationCode, mcp.GrantClientCredentials, o.Grant)
	}
	if o.ClientMetadataURL != "" {
		if u, err := url.Parse(o.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
			ps.add(key+".client_metadata_url", "want an https URL with a path, got %q", o.ClientMetadataURL)
		}
	}
}
