package mcp_test

// This file is the client program the official MCP conformance suite runs
// for each client scenario: the suite starts a test server, then this test
// binary (with AGCORE_MCP_CONFORMANCE_CLIENT=1) with the server's URL as
// its last argument and the scenario in MCP_CONFORMANCE_SCENARIO. It talks
// to the server through agcore's own client (Connect, the OAuth flow,
// elicitation), as agcore would.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys/mcp"
)

// conformanceClientEnv makes the test binary act as the suite's client.
const conformanceClientEnv = "AGCORE_MCP_CONFORMANCE_CLIENT"

func TestMain(m *testing.M) {
	if os.Getenv(conformanceClientEnv) == "1" && os.Getenv("MCP_CONFORMANCE_SCENARIO") != "" && len(os.Args) > 1 {
		if err := conformanceClient(os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
			fmt.Fprintf(os.Stderr, "agcore conformance client: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// conformanceClient runs one scenario against serverURL: connect (which
// initializes and lists the tools), then call the scenario's tool.
func conformanceClient(serverURL, scenario, contextJSON string) error {
	var sc map[string]any
	if contextJSON != "" {
		if err := json.Unmarshal([]byte(contextJSON), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	cfg := mcp.ServerConfig{Name: "conformance", URL: serverURL}
	var tool string
	args := json.RawMessage(`{}`)
	switch {
	case scenario == "initialize":
	case scenario == "tools_call":
		tool, args = "add_numbers", json.RawMessage(`{"a":5,"b":3}`)
	case scenario == "sse-retry":
		tool = "test_reconnection"
	case strings.HasPrefix(scenario, "elicitation"):
		tool = "test_client_elicitation_defaults"
		// The user accepts without typing anything: the schema's defaults
		// make the answer.
		cfg.Elicit = func(context.Context, mcp.Elicitation) (mcp.ElicitAnswer, error) {
			return mcp.ElicitAnswer{Action: mcp.ElicitAccept}, nil
		}
	case scenario == "auth/client-credentials-basic":
		tool = "test-tool"
		id, _ := sc["client_id"].(string)
		secret, _ := sc["client_secret"].(string)
		cfg.OAuth = &mcp.OAuthConfig{Grant: mcp.GrantClientCredentials, ClientID: id, ClientSecret: secret}
	case strings.HasPrefix(scenario, "auth/"):
		tool = "test-tool"
		id, _ := sc["client_id"].(string)
		secret, _ := sc["client_secret"].(string)
		cfg.OAuth = &mcp.OAuthConfig{ClientID: id, ClientSecret: secret,
			ClientMetadataURL: "https://conformance-test.local/client-metadata.json",
			Authorizer:        headlessBrowser{}}
	default:
		return fmt.Errorf("unknown scenario %q", scenario)
	}
	c, err := mcp.Connect(ctx, cfg, mcp.Options{Logger: zerolog.New(os.Stderr), ClientVersion: "conformance"})
	if err != nil {
		return err
	}
	defer c.Close()
	if tool == "" {
		return nil
	}
	res, err := c.CallTool(ctx, tool, args)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool %s answered an error: %s", tool, resultString(res.Content))
	}
	return nil
}

func resultString(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// headlessBrowser stands in for the user's browser in the suite, whose
// authorization server redirects at once: it requests the authorization
// URL and reads the code from the redirect, without following it.
type headlessBrowser struct{}

const conformanceRedirect = "http://localhost:3000/callback"

func (headlessBrowser) RedirectURL(context.Context, string) (string, error) {
	return conformanceRedirect, nil
}

func (headlessBrowser) Authorize(ctx context.Context, req mcp.AuthorizationRequest) (mcp.AuthorizationResult, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, req.URL, nil)
	if err != nil {
		return mcp.AuthorizationResult{}, err
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return mcp.AuthorizationResult{}, err
	}
	defer resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), conformanceRedirect) {
		return mcp.AuthorizationResult{}, fmt.Errorf("authorization answered %s without a redirect to %s", resp.Status, conformanceRedirect)
	}
	q := loc.Query()
	return mcp.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
