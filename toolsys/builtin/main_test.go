package builtin

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main() // bash runs its commands through this binary
	goleak.VerifyTestMain(m)
}

// newWorkspace returns a call context whose workspace is a fresh temporary
// directory, and the directory.
func newWorkspace(t *testing.T) (*toolsys.Context, string) {
	t.Helper()
	dir := t.TempDir()
	ws, err := toolsys.NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &toolsys.Context{Workspace: ws}, ws.Root()
}

// writeFiles creates the files (path relative to root → content), with their
// parent directories.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readFile returns the content of root/rel.
func readFile(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustOK fails the test unless the call succeeded without IsError.
func mustOK(t *testing.T, r toolsys.Result, err error) toolsys.Result {
	t.Helper()
	if err != nil {
		t.Fatalf("Execute error: %v", err)
	}
	if r.IsError {
		t.Fatalf("IsError result: %s", r.Content)
	}
	return r
}

// mustFail fails the test unless the call gave an IsError result.
func mustFail(t *testing.T, r toolsys.Result, err error) toolsys.Result {
	t.Helper()
	if err != nil {
		t.Fatalf("Execute error: %v", err)
	}
	if !r.IsError {
		t.Fatalf("want IsError, got: %s", r.Content)
	}
	return r
}
