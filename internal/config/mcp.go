package config

// This file holds the credentials of MCP servers: <secret_ref:NAME>
// placeholders in headers and bearer_token, checked by Validate and
// resolved by Build from the environment variables AGCORE_SECRET_NAME.

import (
	"errors"
	"fmt"
	"maps"
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
