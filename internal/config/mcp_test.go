package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/toolsys/mcp"
)

// TestBuild_MCPSecretRefs resolves <secret_ref:NAME> placeholders in an HTTP
// server's headers and bearer_token from AGCORE_SECRET_NAME, and registers
// every resolved value with the redactor, so that neither the token nor the
// header it sits in can reach a log line.
func TestBuild_MCPSecretRefs(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte(`
mcp_servers:
  - name: remote
    url: http://127.0.0.1:9000/mcp
    bearer_token: <secret_ref:REMOTE_TOKEN>
    headers:
      X-Api-Key: <secret_ref:REMOTE_KEY>
      X-Tenant: team-<secret_ref:TENANT>
      X-Plain: visible
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = t.TempDir()
	env := map[string]string{
		"AGCORE_SECRET_REMOTE_TOKEN": "tok-123456789",
		"AGCORE_SECRET_REMOTE_KEY":   "key-abcdefghi",
		"AGCORE_SECRET_TENANT":       "tenant-zyxwvu",
	}
	red := redact.New()
	built, err := Build(t.Context(), cfg, BuildOptions{Getenv: func(k string) string { return env[k] }, Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	sc := built.Runtime.MCPServers[0]
	if sc.BearerToken != "tok-123456789" {
		t.Errorf("BearerToken = %q, want the secret's value", sc.BearerToken)
	}
	want := map[string]string{"X-Api-Key": "key-abcdefghi", "X-Tenant": "team-tenant-zyxwvu", "X-Plain": "visible"}
	for k, v := range want {
		if sc.Headers[k] != v {
			t.Errorf("header %s = %q, want %q", k, sc.Headers[k], v)
		}
	}
	line := red.String("auth tok-123456789 key key-abcdefghi tenant team-tenant-zyxwvu plain visible")
	for _, secret := range []string{"tok-123456789", "key-abcdefghi", "tenant-zyxwvu"} {
		if strings.Contains(line, secret) {
			t.Errorf("redacted line %q still holds %q", line, secret)
		}
	}
	if !strings.Contains(line, "visible") {
		t.Errorf("redacted line %q lost a header that is no secret", line)
	}
}

// TestBuild_MCPSecretRefErrors names the server and the key of a
// placeholder that cannot be resolved, and never prints a value.
func TestBuild_MCPSecretRefErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unset secret", "bearer_token: <secret_ref:MISSING>", `mcp server remote: bearer_token: secret MISSING: set the environment variable AGCORE_SECRET_MISSING`},
		{"unset header secret", "headers: {X-Key: \"<secret_ref:NOPE>\"}", `mcp server remote: headers.X-Key: secret NOPE: set the environment variable AGCORE_SECRET_NOPE`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("agcore.yaml", []byte("mcp_servers:\n  - name: remote\n    url: http://127.0.0.1:9000/mcp\n    "+tc.yaml+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Workspace = t.TempDir()
			_, err = Build(t.Context(), cfg, BuildOptions{Getenv: func(string) string { return "" }})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build error = %v, want it to contain %q", err, tc.want)
			}
			if !errors.Is(err, ErrSecretUnset) {
				t.Errorf("Build error %v does not match ErrSecretUnset", err)
			}
		})
	}
}

// TestValidate_MCPCredentials refuses credentials written into the file
// and malformed placeholders, naming the key.
func TestValidate_MCPCredentials(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"literal bearer token", "bearer_token: abc123", `agcore.yaml:4: mcp_servers[0].bearer_token: want a <secret_ref:NAME> placeholder (the secret in AGCORE_SECRET_NAME), never the token itself`},
		{"malformed placeholder", "headers: {X-Key: \"<secret_ref:BAD\"}", `agcore.yaml:4: mcp_servers[0].headers.X-Key: malformed secret placeholder`},
		{"both token keys", "bearer_token: <secret_ref:A>\n    bearer_token_env: B", `mcp_servers[0].bearer_token: set bearer_token or bearer_token_env, not both`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("agcore.yaml", []byte("mcp_servers:\n  - name: remote\n    url: http://127.0.0.1:9000/mcp\n    "+tc.yaml+"\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestBuild_MCPOAuth maps an oauth block onto the client's OAuth
// configuration: tokens stored under the data directory, the client
// secret read from its placeholder and masked, the authorizer passed on.
func TestBuild_MCPOAuth(t *testing.T) {
	data := t.TempDir()
	cfg, err := Parse("agcore.yaml", []byte(`
data_dir: `+data+`
mcp_servers:
  - name: saas
    url: https://mcp.example.com/mcp
    oauth:
      client_id: agcore-cli
      client_secret: <secret_ref:SAAS_CLIENT>
      scopes: [files.read]
    sampling: true
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = t.TempDir()
	red := redact.New()
	authz := &mcp.LoopbackAuthorizer{}
	env := map[string]string{"AGCORE_SECRET_SAAS_CLIENT": "client-secret-value"}
	built, err := Build(t.Context(), cfg, BuildOptions{Getenv: func(k string) string { return env[k] }, Redactor: red, MCPAuthorizer: authz, ToolsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	if roots := built.Runtime.MCPServers[0].Roots; len(roots) != 1 || roots[0] != built.Runtime.Workspace.Root() {
		t.Errorf("Roots = %v, want the workspace %s", roots, built.Runtime.Workspace.Root())
	}
	if !built.Runtime.MCPServers[0].Sampling {
		t.Error("sampling: true was not passed on")
	}
	o := built.Runtime.MCPServers[0].OAuth
	if o == nil {
		t.Fatal("no OAuth configuration")
	}
	if o.ClientID != "agcore-cli" || o.ClientSecret != "client-secret-value" || len(o.Scopes) != 1 || o.Authorizer != authz {
		t.Errorf("OAuth = %+v", o)
	}
	fs, ok := o.Store.(*mcp.FileTokenStore)
	if !ok || fs.Dir != filepath.Join(data, MCPTokenDir) {
		t.Errorf("Store = %#v, want a FileTokenStore in %s", o.Store, filepath.Join(data, MCPTokenDir))
	}
	if got := red.String("secret client-secret-value"); strings.Contains(got, "client-secret-value") {
		t.Errorf("client secret not masked: %q", got)
	}
}

// TestValidate_MCPOAuth refuses what cannot work in an oauth block.
func TestValidate_MCPOAuth(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"literal secret", "oauth: {client_id: a, client_secret: s3cret}", `mcp_servers[0].oauth.client_secret: want a <secret_ref:NAME> placeholder`},
		{"secret without id", "oauth: {client_secret: \"<secret_ref:S>\"}", `mcp_servers[0].oauth.client_secret: only with client_id`},
		{"with a bearer token", "oauth: {}\n    bearer_token: <secret_ref:T>", `mcp_servers[0].oauth: set oauth or a bearer token, not both`},
		{"unknown grant", "oauth: {grant: password}", `mcp_servers[0].oauth.grant: want authorization_code or client_credentials, got "password"`},
		{"client credentials without a secret", "oauth: {grant: client_credentials, client_id: svc}", `mcp_servers[0].oauth.grant: client_credentials needs client_id and client_secret`},
		{"metadata over http", "oauth: {client_metadata_url: \"http://x.example/c.json\"}", `mcp_servers[0].oauth.client_metadata_url: want an https URL with a path`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("agcore.yaml", []byte("mcp_servers:\n  - name: remote\n    url: http://127.0.0.1:9000/mcp\n    "+tc.yaml+"\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	_, err := Parse("agcore.yaml", []byte("mcp_servers:\n  - name: local\n    command: x\n    oauth: {}\n"))
	if err == nil || !strings.Contains(err.Error(), "mcp_servers[0].oauth: only for a server with url") {
		t.Errorf("oauth on a stdio server: %v", err)
	}
}
