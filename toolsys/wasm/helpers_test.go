package wasm_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
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

// testTools are the test tools by name, and the folder of testdata/tools
// each is built from. codec is a module of its own (the benchmarks measure
// it); the others share the suite module, which picks the tool by its
// program name, so that the tests compile it once.
var testTools = map[string]string{
	"codec":            "codec",
	"meta":             "suite",
	"crash":            "suite",
	"loop":             "suite",
	"hog":              "suite",
	"badhelp":          "suite",
	"escape_none":      "suite",
	"escape_read_only": "suite",
	"escape_write":     "suite",
}

// wasmFile returns the path of the named test tool, built from Go source
// with GOOS=wasip1 GOARCH=wasm on first use. It skips the test when the Go
// toolchain is not on PATH.
func wasmFile(t testing.TB, name string) string {
	t.Helper()
	src, ok := testTools[name]
	if !ok {
		t.Fatalf("no test tool %q", name)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the Go toolchain is not on PATH: the WASM test tools cannot be built")
	}
	testEnv.mu.Lock()
	defer testEnv.mu.Unlock()
	bin := filepath.Join(testEnv.dir, "build", src+".wasm")
	err, done := testEnv.built[src]
	if !done {
		cmd := exec.Command(goBin, "build", "-trimpath", "-o", bin, "./testdata/tools/"+src)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if b, cerr := cmd.CombinedOutput(); cerr != nil {
			err = fmt.Errorf("building %s: %v\n%s", src, cerr, b)
		}
		testEnv.built[src] = err
	}
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(testEnv.dir, name+".wasm")
	if _, err := os.Stat(out); err == nil {
		return out
	}
	data, err := os.ReadFile(bin)
	if err == nil {
		err = os.WriteFile(out, data, 0o600)
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

// codecParams are the parameters of nativeCodec, the same as the codec
// test tool's.
type codecParams struct {
	Mode     string `json:"mode" jsonschema:"enum=encode,enum=decode,description=encode or decode the input"`
	Input    string `json:"input" jsonschema:"description=the text to transform"`
	Alphabet string `json:"alphabet,omitempty" jsonschema:"enum=base64,enum=hex,default=base64,description=the encoding to use"`
}

// nativeCodec is the codec test tool written as a typed Go tool: the
// baseline of the benchmarks, and a built-in tool for name clashes.
type nativeCodec struct{}

func (nativeCodec) Name() string                   { return "codec" }
func (nativeCodec) Description() string            { return "Encodes text as base64 or hex, or decodes it back." }
func (nativeCodec) Permission() toolsys.Permission { return toolsys.PermNone }
func (nativeCodec) SecretParams() []string         { return nil }

func (nativeCodec) Execute(_ context.Context, p codecParams, _ *toolsys.Context) (toolsys.Result, error) {
	var out string
	var err error
	switch p.Mode + "/" + p.Alphabet {
	case "encode/base64", "encode/":
		out = base64.StdEncoding.EncodeToString([]byte(p.Input))
	case "encode/hex":
		out = hex.EncodeToString([]byte(p.Input))
	case "decode/base64", "decode/":
		var b []byte
		b, err = base64.StdEncoding.DecodeString(p.Input)
		out = string(b)
	case "decode/hex":
		var b []byte
		b, err = hex.DecodeString(p.Input)
		out = string(b)
	}
	if err != nil {
		return toolsys.ErrorResult("codec: %v", err), nil
	}
	return toolsys.Result{Content: out}, nil
}
