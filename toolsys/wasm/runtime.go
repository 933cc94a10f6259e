package wasm

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// wasiModule is the only module a tool may import from.
const wasiModule = wasi_snapshot_preview1.ModuleName

// Runtime compiles and runs WASM tools: one wazero runtime with WASI
// preview 1, the memory cap, and the compilation cache. It is safe for
// concurrent use; Close it when done.
type Runtime struct {
	cfg   Config
	wrt   wazero.Runtime
	cache wazero.CompilationCache
	alloc experimental.MemoryAllocator

	closeOnce sync.Once
	closeErr  error

	// beforeRun, when set (by tests), is called as each run starts.
	beforeRun func()
}

// NewRuntime starts a runtime. cfg is copied; a field out of range yields
// an error naming it.
func NewRuntime(ctx context.Context, cfg Config) (*Runtime, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Runtime{cfg: cfg, alloc: newAllocator()}
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(cfg.MemoryLimitPages)
	if cfg.CacheDir != "" {
		if r.cache, err = wazero.NewCompilationCacheWithDir(cfg.CacheDir); err != nil {
			return nil, fmt.Errorf("wasm: Config.CacheDir: %w", err)
		}
		rc = rc.WithCompilationCache(r.cache)
	}
	r.wrt = wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r.wrt); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("wasm: instantiating WASI: %w", err)
	}
	return r, nil
}

// Close closes every tool the runtime loaded (calls in flight fail) and
// the runtime. It is idempotent.
func (r *Runtime) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		var errs []error
		if r.wrt != nil {
			errs = append(errs, r.wrt.Close(ctx))
		}
		if r.cache != nil {
			errs = append(errs, r.cache.Close(ctx))
		}
		r.closeErr = errors.Join(errs...)
	})
	return r.closeErr
}

// Load makes a tool of the .wasm file at path: it compiles the module (or
// takes its compiled code from the cache), checks that it is a WASI
// command importing nothing but WASI preview 1, runs it with --help and
// parses what it prints (see ParseHelp). Any failure is a *LoadError naming
// the file. The tool is not registered anywhere; Close it when it is no
// longer used.
func (r *Runtime) Load(ctx context.Context, path string) (*Tool, error) {
	data, err := readModule(path, r.cfg.MaxFileSize)
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	return r.load(ctx, path, data)
}

// readModule reads a .wasm file of at most max bytes.
func readModule(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("the file is %d bytes long, more than the %d allowed (Config.MaxFileSize)", fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("the file grew past the %d bytes allowed (Config.MaxFileSize) while it was read", max)
	}
	return data, nil
}

// load makes a tool of data, read from path.
func (r *Runtime) load(ctx context.Context, path string, data []byte) (*Tool, error) {
	fail := func(err error) (*Tool, error) { return nil, &LoadError{Path: path, Err: err} }
	cm, err := r.wrt.CompileModule(ctx, data)
	if err != nil {
		return fail(fmt.Errorf("compiling: %w", err))
	}
	closeCM := true
	defer func() {
		if closeCM {
			_ = cm.Close(context.WithoutCancel(ctx))
		}
	}()
	if err := checkShape(cm); err != nil {
		return fail(err)
	}
	help, err := r.help(ctx, path, cm)
	if err != nil {
		return fail(err)
	}
	t, err := newTool(r, path, sha256.Sum256(data), cm, help)
	if err != nil {
		return fail(err)
	}
	closeCM = false
	r.cfg.Logger.Debug().Str("path", path).Str("tool", t.Name()).Int("params", len(help.Params)).
		Str("permission", help.Permission.String()).Msg("wasm tool loaded")
	return t, nil
}

// checkShape checks that cm is a WASI command that imports only WASI
// preview 1 functions.
func checkShape(cm wazero.CompiledModule) error {
	for _, f := range cm.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod != wasiModule {
			return fmt.Errorf("%w: function %s.%s", ErrImports, mod, name)
		}
	}
	for _, m := range cm.ImportedMemories() {
		mod, name, _ := m.Import()
		return fmt.Errorf("%w: memory %s.%s", ErrImports, mod, name)
	}
	if _, ok := cm.ExportedFunctions()["_start"]; !ok {
		return ErrNotCommand
	}
	return nil
}

// help runs the module with --help and parses its standard output.
func (r *Runtime) help(ctx context.Context, path string, cm wazero.CompiledModule) (*Help, error) {
	stem := programName(path)
	out, err := r.run(ctx, cm, runSpec{args: []string{stem, "--help"}, stdoutLimit: maxHelpSize})
	if err != nil {
		f := classify(ctx, err)
		switch {
		case f.canceled != nil:
			return nil, f.canceled
		case f.timedOut:
			return nil, fmt.Errorf("--help did not finish within %s (Config.Timeout)", r.cfg.Timeout)
		case f.trap != "":
			return nil, fmt.Errorf("--help trapped: %s%s", f.trap, stderrNote(out))
		case f.exitCode != 0:
			return nil, fmt.Errorf("--help exited with status %d%s", f.exitCode, stderrNote(out))
		}
	}
	if out.truncated() {
		return nil, &HelpError{File: path, Problem: fmt.Sprintf("the text is longer than the %d bytes read", maxHelpSize)}
	}
	h, err := ParseHelp(path, out.stdout)
	if err != nil {
		return nil, err
	}
	if h.Name == "" {
		if !nameRE.MatchString(stem) {
			return nil, &HelpError{File: path, Problem: fmt.Sprintf("no \"name:\" line, and the file name %q is not a tool name (1 to 64 of [a-zA-Z0-9_-])", stem)}
		}
		h.Name = stem
	}
	return h, nil
}

// programName is the name a tool's program runs under: its file's name
// without ".wasm".
func programName(path string) string { return strings.TrimSuffix(filepath.Base(path), ".wasm") }

// stderrNote is ": " and the head of the run's standard error, or "".
func stderrNote(out *output) string {
	if s := stderrHead(out, 512); s != "" {
		return ": " + s
	}
	return ""
}

// stderrHead returns at most n bytes of the run's standard error, as one
// line of valid UTF-8.
func stderrHead(out *output, n int) string {
	if out == nil {
		return ""
	}
	b := out.stderr
	if len(b) > n {
		b = b[:n]
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if int64(len(b)) < out.stderrTotal {
		s += " ..."
	}
	return s
}

// runSpec is what one run of a module gets.
type runSpec struct {
	// args is argv: the program name, then the arguments.
	args []string
	// env is the environment, "NAME=value" entries.
	env []string
	// fs is mounted at "/" when not nil.
	fs *rootFS
	// stdoutLimit caps the standard output kept.
	stdoutLimit int
}

// run instantiates cm once, which runs its _start, under the runtime's
// timeout: the module is closed when the deadline passes or ctx ends. The
// error is that of the run (an exit with a status, a trap, the deadline);
// the output is what it wrote before.
func (r *Runtime) run(ctx context.Context, cm wazero.CompiledModule, s runSpec) (*output, error) {
	rctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	stdout := &capWriter{limit: s.stdoutLimit, fail: true}
	stderr := &capWriter{limit: r.cfg.StderrLimit}
	mc := wazero.NewModuleConfig().
		WithName("").
		WithArgs(s.args...).
		WithStdin(eof{}).
		WithStdout(stdout).
		WithStderr(stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(randReader{})
	for _, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		mc = mc.WithEnv(k, v)
	}
	if s.fs != nil {
		mc = mc.WithFSConfig(mountRoot(s.fs))
	}
	if r.beforeRun != nil {
		r.beforeRun()
	}
	mod, err := r.wrt.InstantiateModule(experimental.WithMemoryAllocator(rctx, r.alloc), cm, mc)
	if mod != nil {
		_ = mod.Close(context.WithoutCancel(ctx))
	}
	out := &output{stdout: stdout.buf, stdoutTotal: stdout.total, stderr: stderr.buf, stderrTotal: stderr.total}
	return out, err
}
