package config

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/wasm"
)

func TestParse_WASM(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Parse(filepath.Join(dir, "agcore.yaml"), []byte(
		"wasm:\n  dir: tools\n  memory_limit_pages: 512\n  timeout: 5s\n  output_limit: 4096\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := WASM{Dir: filepath.Join(dir, "tools"), MemoryLimitPages: 512, Timeout: 5 * time.Second, OutputLimit: 4096}
	if cfg.WASM != want {
		t.Errorf("wasm = %+v, want %+v", cfg.WASM, want)
	}
	for yaml, problem := range map[string]string{
		"wasm:\n  memory_limit_pages: 70000\n": "agcore.yaml:2: wasm.memory_limit_pages: 70000 is more than WebAssembly can address (at most 65536 pages of 64 KiB)",
		"wasm:\n  timeout: -1s\n":              "agcore.yaml:2: wasm.timeout: must not be negative, got -1s",
		"wasm:\n  output_limit: -1\n":          "agcore.yaml:2: wasm.output_limit: must not be negative, got -1",
		"wasm:\n  directory: x\n":              "agcore.yaml:2: wasm.directory: unknown key",
	} {
		_, err := Parse("agcore.yaml", []byte(yaml))
		var ce *Error
		if !errors.As(err, &ce) || !strings.HasPrefix(ce.Problems[0].String(), problem) {
			t.Errorf("Parse(%q) = %v, want %s", yaml, err, problem)
		}
	}
}

// buildCodec builds the codec test tool of toolsys/wasm into dir, or skips
// the test without the Go toolchain.
func buildCodec(t *testing.T, dir string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the Go toolchain is not on PATH: the WASM test tool cannot be built")
	}
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", filepath.Join(dir, "codec.wasm"),
		filepath.Join("..", "..", "toolsys", "wasm", "testdata", "tools", "codec"))
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the codec tool: %v\n%s", err, out)
	}
}

func TestBuild_WASMTools(t *testing.T) {
	cfg := Default()
	cfg.DataDir = t.TempDir()
	cfg.Workspace = t.TempDir()
	tools := filepath.Join(cfg.DataDir, "tools")
	if err := os.MkdirAll(tools, 0o700); err != nil {
		t.Fatal(err)
	}
	buildCodec(t, tools)
	if err := os.WriteFile(filepath.Join(tools, "junk.wasm"), []byte("not wasm"), 0o600); err != nil {
		t.Fatal(err)
	}
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	info, ok := built.Tools.Info("codec")
	if !ok || info.Source != toolsys.SourceWASM {
		t.Fatalf("codec = %+v (found %v), want a wasm tool", info, ok)
	}
	if info, _ := built.Tools.Info("read_file"); info.Source != toolsys.SourceBuiltin {
		t.Errorf("read_file has source %q, want builtin", info.Source)
	}
	res, err := built.Tools.Call(t.Context(), "codec", json.RawMessage(`{"mode":"encode","input":"hi"}`), nil)
	if err != nil || res.Content != "aGk=" {
		t.Errorf("codec = %+v, %v", res, err)
	}
	refused := built.WASM.Refused()
	var le *wasm.LoadError
	if len(refused) != 1 || !errors.As(refused[0], &le) || le.Path != filepath.Join(tools, "junk.wasm") {
		t.Errorf("Refused = %v, want junk.wasm", refused)
	}
	if fi, err := os.Stat(filepath.Join(cfg.DataDir, "cache", "wasm")); err != nil || !fi.IsDir() {
		t.Errorf("no compilation cache in the data directory: %v", err)
	}
	if err := built.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := built.Tools.Get("codec"); ok {
		t.Error("Close left the WASM tool registered")
	}
}

func TestBuild_WASMDirWithoutDataDir(t *testing.T) {
	cfg := Default()
	cfg.Workspace = t.TempDir()
	cfg.WASM.Dir = t.TempDir()
	buildCodec(t, cfg.WASM.Dir)
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true, ToolsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	if _, ok := built.Tools.Get("codec"); !ok {
		t.Errorf("wasm.dir without a data directory: tools %v", built.Tools.Names())
	}
}

func TestBuild_WASMToolsOnlyCreatesNothing(t *testing.T) {
	cfg := Default()
	cfg.Workspace = t.TempDir()
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true, ToolsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	if _, err := os.Stat(cfg.DataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("listing the tools created the data directory (%v)", err)
	}
	if got := len(built.Tools.ListBySource(toolsys.SourceWASM)); got != 0 {
		t.Errorf("%d wasm tools without a folder", got)
	}

	built2, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built2.Close()
	if fi, err := os.Stat(filepath.Join(cfg.DataDir, "tools")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("a runtime build did not create the tool folder 0700: %v, %v", fi, err)
	}
}

func TestBuild_WASMDirThatIsAFile(t *testing.T) {
	cfg := Default()
	cfg.Workspace = t.TempDir()
	cfg.WASM.Dir = filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(cfg.WASM.Dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
	if err == nil || !strings.Contains(err.Error(), "config: wasm.dir: ") {
		t.Errorf("Build with wasm.dir a file = %v, want an error naming wasm.dir", err)
	}
}
