// Package testpeers finds the external programs some tests talk to (the
// pinned npm MCP servers, a browser), so that a test run by hand without
// them skips with a message saying how to install them, while a run that
// must cover them (continuous integration sets AGCORE_REQUIRE_PEERS=1)
// fails instead of skipping silently.
package testpeers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireEnv is the environment variable that turns a missing peer from a
// skip into a failure.
const RequireEnv = "AGCORE_REQUIRE_PEERS"

// MCPDir is where scripts/test.sh installs the npm MCP servers, relative to
// the module root.
const MCPDir = "toolsys/mcp/testdata/peers"

// Missing ends t because a peer is not installed: it fails when
// AGCORE_REQUIRE_PEERS is set, and skips otherwise. how says how to install
// the peer.
func Missing(t testing.TB, what, how string) {
	t.Helper()
	msg := fmt.Sprintf("%s is not installed: %s", what, how)
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s (%s is set: the peers must be there)", msg, RequireEnv)
	}
	t.Skip(msg + "; skipping")
}

// MCPServer returns node and the absolute path of the installed npm MCP
// server bin (such as "mcp-server-everything"), or ends t with Missing.
func MCPServer(t testing.TB, bin string) (node, path string) {
	t.Helper()
	how := "run scripts/test.sh, which runs npm ci in " + MCPDir
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "node (for the MCP test servers)", "install Node.js, then "+how)
	}
	path = filepath.Join(ModuleRoot(t), MCPDir, "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err != nil {
		Missing(t, "the MCP test server "+bin, how)
	}
	return node, path
}

// MCPFile returns the absolute path of a file of the MCP test peers
// directory, such as its loopback shim.
func MCPFile(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(ModuleRoot(t), MCPDir, name)
}

// ModuleRoot returns the directory of the go.mod above the working
// directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
