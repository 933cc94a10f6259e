package wasm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	wsys "github.com/tetratelabs/wazero/sys"

	"github.com/agcore/agcore/toolsys/wasm"
)

// cacheFiles describes every file under dir: its size, modification time
// and inode, which a rewrite changes.
func cacheFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := wsys.NewStat_t(fi)
		out[p] = fmt.Sprint(fi.ModTime(), fi.Size(), st.Ino)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRuntime_CompiledCodeIsCachedOnDisk(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	first := newRuntime(t, wasm.Config{CacheDir: cache})
	load(t, first, "codec")
	if err := first.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := cacheFiles(t, cache)
	if len(before) == 0 {
		t.Fatal("compiling left nothing in the cache")
	}
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cache directory mode = %v, %v; want 0700", fi.Mode(), err)
	}

	// A restarted process: a new runtime on the same cache.
	second := newRuntime(t, wasm.Config{CacheDir: cache})
	tool := load(t, second, "codec")
	res, err := tool.Execute(t.Context(), json.RawMessage(`{"mode":"encode","input":"hi"}`), nil)
	if err != nil || res.Content != "aGk=" {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	if diff := cmp.Diff(before, cacheFiles(t, cache)); diff != "" {
		t.Errorf("the restarted runtime compiled again: the cache changed (-before +after):\n%s", diff)
	}
}

func TestNewRuntime_Config(t *testing.T) {
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cfg  wasm.Config
		want string
	}{
		{wasm.Config{MemoryLimitPages: wasm.MaxMemoryLimitPages + 1}, "Config.MemoryLimitPages: 65537 is more than WebAssembly can address"},
		{wasm.Config{Timeout: -1}, "Config.Timeout: must not be negative"},
		{wasm.Config{OutputLimit: -1}, "Config.OutputLimit: must not be negative"},
		{wasm.Config{StderrLimit: -1}, "Config.StderrLimit: must not be negative"},
		{wasm.Config{MaxFileSize: -1}, "Config.MaxFileSize: must not be negative"},
		{wasm.Config{CacheDir: open}, "Config.CacheDir: " + open + " is writable by others"},
		{wasm.Config{CacheDir: file}, "is not a directory"},
	}
	for _, tt := range tests {
		rt, err := wasm.NewRuntime(t.Context(), tt.cfg)
		if err == nil {
			_ = rt.Close(context.Background())
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewRuntime(%+v) = %v, want an error containing %q", tt.cfg, err, tt.want)
		}
	}
	rt, err := wasm.NewRuntime(t.Context(), wasm.Config{})
	if err != nil {
		t.Fatalf("the zero Config: %v", err)
	}
	if err := rt.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(t.Context()); err != nil {
		t.Errorf("a second Close = %v", err)
	}
}

func TestRuntime_Load_Refusals(t *testing.T) {
	rt := newRuntime(t, wasm.Config{MaxFileSize: 1 << 20})
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A module that exports nothing: the smallest valid WebAssembly.
	empty := write("empty.wasm", []byte("\x00asm\x01\x00\x00\x00"))
	// A module importing a function from "env".
	imports := write("imports.wasm", []byte("\x00asm\x01\x00\x00\x00"+
		"\x01\x04\x01\x60\x00\x00"+ // type section: () -> ()
		"\x02\x09\x01\x03env\x01f\x00\x00")) // import env.f
	big := wasmFile(t, "codec") // more than 1 MiB
	tests := []struct {
		path string
		is   error
		want string
	}{
		{empty, wasm.ErrNotCommand, "empty.wasm: not a WASI command"},
		{imports, wasm.ErrImports, "function env.f"},
		{big, nil, "more than the 1048576 allowed (Config.MaxFileSize)"},
		{filepath.Join(dir, "missing.wasm"), fs.ErrNotExist, "missing.wasm"},
		{write("text.wasm", []byte("hello")), nil, "text.wasm: compiling"},
	}
	for _, tt := range tests {
		_, err := rt.Load(t.Context(), tt.path)
		var le *wasm.LoadError
		if !errors.As(err, &le) || le.Path != tt.path || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%s) = %v, want a LoadError containing %q", filepath.Base(tt.path), err, tt.want)
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("Load(%s) = %v, want errors.Is %v", filepath.Base(tt.path), err, tt.is)
		}
	}
}
