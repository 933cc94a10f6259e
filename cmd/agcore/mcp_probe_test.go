package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// probeServer is an MCP server with a tool, a resource and a prompt.
func probeServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "probe", Version: "1.2.3"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes its message.\nMore text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct {
			Message string `json:"message"`
		}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Message}}}, nil, nil
		})
	s.AddResource(&sdk.Resource{URI: "file:///notes.txt", Name: "notes", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Greets someone", Arguments: []*sdk.PromptArgument{{Name: "who"}}},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{}, nil
		})
	return s
}

// TestMCPTest_URL prints the server, its capabilities, tools, resources
// and prompts, and the result of --call.
func TestMCPTest_URL(t *testing.T) {
	s := probeServer()
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer srv.Close()
	code, stdout, stderr := runCLI(t.Context(), t, nil, "mcp", "test", "--call", "echo", "--args", `{"message":"hi"}`, srv.URL)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"server        probe 1.2.3 (protocol ",
		"capabilities  tools, resources, prompts, logging",
		"tools (1)\n  echo                         Echoes its message.\n",
		"resources (1)\n  file:///notes.txt            notes text/plain\n",
		"prompts (1)\n  greet                        Greets someone (arguments: who)\n",
		"call echo:\necho: hi\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// TestMCPTest_UsageErrors names the flag or argument that is wrong.
func TestMCPTest_UsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "test", "http://127.0.0.1:1/mcp", "extra"}, "a URL takes no arguments"},
		{[]string{"mcp", "test", "--header", "novalue", "http://127.0.0.1:1/mcp"}, "--header \"novalue\": want 'Name: value'"},
		{[]string{"mcp", "test", "--client-id", "x", "some-command"}, "--header, --bearer-token-env and --client-id are for a URL server"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(t.Context(), t, nil, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// TestMCPTest_AuthorizesAConfiguredServer runs the authorization flow for
// a configured OAuth server: the URL is printed, the redirect comes back
// to the listener on 127.0.0.1, and the token is stored in the data
// directory with mode 0600, where a second run finds it without asking.
func TestMCPTest_AuthorizesAConfiguredServer(t *testing.T) {
	as := newTinyOAuth(t, probeServer())
	data := t.TempDir()
	cfg := writeConfig(t, fmt.Sprintf("data_dir: %s\nworkspace: .\nmcp_servers:\n  - name: saas\n    url: %s\n    oauth: {}\n", data, as.url()), nil)
	stderr := &browserWriter{t: t}
	var stdout strings.Builder
	code := run(t.Context(), []string{"--config", cfg, "mcp", "test", "saas"}, &stdout, stderr, testEnv(t, nil))
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "MCP server saas needs authorization. Open this URL in a browser:") {
		t.Errorf("the authorization URL was not printed:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "tools (1)") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	st, err := os.Stat(filepath.Join(data, "mcp-oauth", "saas.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v; want 0600", err, st)
	}
	code, _, errText := runCLI(t.Context(), t, nil, "--config", cfg, "mcp", "test", "saas")
	if code != exitOK || strings.Contains(errText, "needs authorization") {
		t.Errorf("second run: exit %d, asked again:\n%s", code, errText)
	}
	if as.authorizations() != 1 {
		t.Errorf("authorizations = %d, want 1", as.authorizations())
	}
}

// browserWriter is stderr, and the user's browser: it opens the
// authorization URL printed on it.
type browserWriter struct {
	t  *testing.T
	mu sync.Mutex
	b  strings.Builder
}

var authURLRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/authorize\?\S+`)

func (w *browserWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.b.Write(p)
	w.mu.Unlock()
	if u := authURLRE.Find(p); u != nil {
		go func() {
			resp, err := http.Get(string(u))
			if err != nil {
				w.t.Errorf("browser: %v", err)
				return
			}
			resp.Body.Close()
		}()
	}
	return len(p), nil
}

func (w *browserWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// tinyOAuth is an MCP server behind the smallest authorization server the
// flow accepts: dynamic registration, PKCE authorization that redirects at
// once, and tokens.
type tinyOAuth struct {
	srv *httptest.Server

	mu     sync.Mutex
	tokens map[string]bool
	authz  int
}

func newTinyOAuth(t *testing.T, s *sdk.Server) *tinyOAuth {
	o := &tinyOAuth{tokens: map[string]bool{}}
	mux := http.NewServeMux()
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		js(w, map[string]any{"resource": o.url(), "authorization_servers": []string{o.srv.URL}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		js(w, map[string]any{"issuer": o.srv.URL, "authorization_endpoint": o.srv.URL + "/authorize",
			"token_endpoint": o.srv.URL + "/token", "registration_endpoint": o.srv.URL + "/register",
			"code_challenge_methods_supported": []string{"S256"}, "response_types_supported": []string{"code"}})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		js(w, map[string]any{"client_id": "cli-1", "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.authz++
		o.mu.Unlock()
		back, _ := url.Parse(r.URL.Query().Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"c1"}, "state": {r.URL.Query().Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, _ *http.Request) {
		o.mu.Lock()
		tok := fmt.Sprintf("tok-%d-secretvalue", len(o.tokens))
		o.tokens[tok] = true
		o.mu.Unlock()
		js(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "refresh_token": "r-" + tok})
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		ok := o.tokens[tok]
		o.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer resource_metadata=%q", o.srv.URL+"/.well-known/oauth-protected-resource/mcp"))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	o.srv = httptest.NewServer(mux)
	t.Cleanup(o.srv.Close)
	return o
}

func (o *tinyOAuth) url() string { return o.srv.URL + "/mcp" }

func (o *tinyOAuth) authorizations() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.authz
}

var _ io.Writer = (*browserWriter)(nil)

// TestMCPTest_CallAsksTheServersQuestion asks, on a terminal, the question
// a server puts during --call, and sends the answer with the defaults.
func TestMCPTest_CallAsksTheServersQuestion(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	sdk.AddTool(s, &sdk.Tool{Name: "ask"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Who are you?", RequestedSchema: json.RawMessage(
			`{"type":"object","properties":{"age":{"type":"integer"},"name":{"type":"string","default":"Ann"}},"required":["age"]}`)})
		if err != nil {
			return nil, nil, err
		}
		data, _ := json.Marshal(res.Content)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + string(data)}}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer srv.Close()
	var stdout, stderr strings.Builder
	a := newApp(&stdout, &stderr, testEnv(t, nil))
	a.terminal = func(any) bool { return true }
	code := a.execute(t.Context(), []string{"mcp", "test", "--call", "ask", srv.URL}, strings.NewReader("7\n\na\n"))
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "MCP server test asks: Who are you?") {
		t.Errorf("the question was not asked:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), `call ask:`+"\n"+`accept {"age":7,"name":"Ann"}`) {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}
