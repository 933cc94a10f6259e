package wasm_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/wasm"
)

// testEnv is where TestMain puts the tools it builds and the compilation
// cache the tests share.
var testEnv struct {
	dir   string // built .wasm files
	cache string // shared compilation cache
	mu    sync.Mutex
	built map[string]error
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "agcore-wasm-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testEnv.dir = filepath.Join(dir, "tools")
	testEnv.cache = filepath.Join(dir, "cache")
	testEnv.built = map[string]error{}
	if err := os.Mkdir(testEnv.dir, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// toolVariants are the tools built from testdata/tools: a name, its
// source folder and its linker flags.
var toolVariants = map[string]struct{ src, ldflags string }{
	"codec":            {"codec", ""},
	"meta":             {"meta", ""},
	"crash":            {"crash", ""},
	"loop":             {"loop", ""},
	"hog":              {"hog", ""},
	"badhelp":          {"badhelp", ""},
	"escape_none":      {"escape", "-X main.permission=none"},
	"escape_read_only": {"escape", ""},
	"escape_write":     {"escape", "-X main.permission=write"},
}

// wasmFile returns the path of the named test tool, built from Go source
// with GOOS=wasip1 GOARCH=wasm on first use. It skips the test when the Go
// toolchain is not on PATH.
func wasmFile(t testing.TB, name string) string {
	t.Helper()
	v, ok := toolVariants[name]
	if !ok {
		t.Fatalf("no test tool %q", name)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the Go toolchain is not on PATH: the WASM test tools cannot be built")
	}
	out := filepath.Join(testEnv.dir, name+".wasm")
	testEnv.mu.Lock()
	defer testEnv.mu.Unlock()
	err, done := testEnv.built[name]
	if !done {
		args := []string{"build", "-trimpath", "-o", out}
		if v.ldflags != "" {
			args = append(args, "-ldflags="+v.ldflags)
		}
		cmd := exec.Command(goBin, append(args, "./testdata/tools/"+v.src)...)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if b, cerr := cmd.CombinedOutput(); cerr != nil {
			err = fmt.Errorf("building %s: %v\n%s", name, cerr, b)
		}
		testEnv.built[name] = err
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// copyTool copies the named test tool into dir as file, and returns the
// path.
func copyTool(t testing.TB, name, dir, file string) string {
	t.Helper()
	data, err := os.ReadFile(wasmFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// newRuntime starts a runtime on the shared cache unless cfg names one,
// closed at the end of the test.
func newRuntime(t testing.TB, cfg wasm.Config) *wasm.Runtime {
	t.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = testEnv.cache
	}
	rt, err := wasm.NewRuntime(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// load loads the named test tool.
func load(t testing.TB, rt *wasm.Runtime, name string) *wasm.Tool {
	t.Helper()
	tool, err := rt.Load(context.Background(), wasmFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// openRegistry is a registry whose permission pipeline runs every call,
// with secrets from store.
func openRegistry(t testing.TB, store toolsys.SecretStore) *toolsys.Registry {
	t.Helper()
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeBypass})
	if err != nil {
		t.Fatal(err)
	}
	return toolsys.NewRegistry(toolsys.Config{Permissions: perms, Secrets: store})
}

// workspace opens a workspace on a new temporary folder.
func workspace(t testing.TB) *toolsys.Workspace {
	t.Helper()
	ws, err := toolsys.NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}
