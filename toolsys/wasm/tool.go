package wasm

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/agcore/agcore/toolsys"
)

// Tool is a WASM tool: a compiled WASI command and what its --help
// declared. It implements toolsys.Tool; register it with
// toolsys.WithSource(toolsys.SourceWASM). Each call instantiates the
// compiled module once, in its own sandbox, so calls run concurrently and
// share nothing. It is safe for concurrent use.
type Tool struct {
	rt        *Runtime
	path      string
	stem      string // the program name: the file's name without ".wasm"
	sum       [32]byte
	cm        wazero.CompiledModule
	help      *Help
	schema    json.RawMessage
	required  []string
	secrets   []string
	validator *toolsys.Validator

	mu       sync.Mutex
	inflight int
	closed   bool
	released bool
}

var _ toolsys.Tool = (*Tool)(nil)

// newTool builds the tool's schema and validator.
func newTool(rt *Runtime, path string, sum [32]byte, cm wazero.CompiledModule, h *Help) (*Tool, error) {
	schema, err := h.Schema()
	if err != nil {
		return nil, err
	}
	v, err := toolsys.CompileSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	t := &Tool{rt: rt, path: path, stem: programName(path), sum: sum, cm: cm, help: h, schema: schema,
		validator: v, secrets: h.secretParams()}
	for _, p := range h.Params {
		if p.Required {
			t.required = append(t.required, p.Name)
		}
	}
	return t, nil
}

// Name is the declared name, or the file's name without ".wasm".
func (t *Tool) Name() string { return t.help.Name }

// Description is the declared one-line description.
func (t *Tool) Description() string { return t.help.Description }

// Schema is the normalised JSON Schema generated from the parameters.
func (t *Tool) Schema() json.RawMessage { return t.schema }

// Permission is the declared level.
func (t *Tool) Permission() toolsys.Permission { return t.help.Permission }

// SecretParams lists the parameters declared secret.
func (t *Tool) SecretParams() []string { return slices.Clone(t.secrets) }

// Idempotent is the declared answer, or whether the permission is at most
// PermReadOnly when none is declared.
func (t *Tool) Idempotent() bool {
	if t.help.Idempotent != nil {
		return *t.help.Idempotent
	}
	return t.help.Permission <= toolsys.PermReadOnly
}

// Path is the .wasm file the tool was loaded from.
func (t *Tool) Path() string { return t.path }

// Digest is the SHA-256 of the module, in hex.
func (t *Tool) Digest() string { return hex.EncodeToString(t.sum[:]) }

// Help returns a copy of what the tool declared.
func (t *Tool) Help() Help {
	h := *t.help
	h.Env = slices.Clone(h.Env)
	h.Params = slices.Clone(h.Params)
	return h
}

// Close retires the tool: later calls fail with ErrClosed, and its
// compiled code is released once the calls in flight have ended. It is
// idempotent.
func (t *Tool) Close(ctx context.Context) error {
	t.mu.Lock()
	t.closed = true
	release := t.inflight == 0 && !t.released
	t.released = t.released || release
	t.mu.Unlock()
	if release {
		return t.cm.Close(ctx)
	}
	return nil
}

// acquire counts a call in; false when the tool is closed.
func (t *Tool) acquire() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.inflight++
	return true
}

// release counts a call out, releasing the compiled code of a closed tool
// after its last call.
func (t *Tool) release(ctx context.Context) {
	t.mu.Lock()
	t.inflight--
	last := t.closed && t.inflight == 0 && !t.released
	t.released = t.released || last
	t.mu.Unlock()
	if last {
		_ = t.cm.Close(context.WithoutCancel(ctx))
	}
}

// Execute validates the arguments against the schema (an IsError result
// naming the field when they are wrong, and no run), maps them to the
// command line (see Help.Args; the program name is the file's name
// without ".wasm", as for --help), and runs the module once in its
// sandbox: the workspace of tc mounted at "/" (not at all for PermNone or
// when tc has no workspace, read-only for PermReadOnly), the declared
// environment only, the memory cap, the timeout and the output cap.
//
// Standard output makes the result (see the package documentation). A
// non-zero exit status, a trap (a Go panic, an access out of bounds) and
// the runtime's timeout are IsError results that say so, with the head of
// standard error; standard error is logged to tc.Logger, capped. A ctx that
// ends first is a Go error wrapping its cause, as is a closed tool
// (ErrClosed).
func (t *Tool) Execute(ctx context.Context, args json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	if !t.acquire() {
		return toolsys.Result{}, fmt.Errorf("wasm tool %s: %w", t.Name(), ErrClosed)
	}
	defer t.release(ctx)
	if tc == nil {
		tc = &toolsys.Context{}
	}
	argv, res, ok := t.commandLine(args)
	if !ok {
		return res, nil
	}
	spec := runSpec{args: argv, env: t.help.Env, stdoutLimit: t.rt.cfg.OutputLimit}
	if t.help.Permission >= toolsys.PermReadOnly && tc.Workspace != nil {
		spec.fs = &rootFS{root: tc.Workspace.FS(), policy: t.rt.cfg.Files, readOnly: t.help.Permission < toolsys.PermWrite}
	}
	out, err := t.rt.run(ctx, t.cm, spec)
	f := classify(ctx, err)
	t.log(tc, out, f)
	if f.canceled != nil {
		return toolsys.Result{}, f.canceled
	}
	return t.result(out, f), nil
}

// commandLine validates args and maps them to argv; when they are wrong,
// ok is false and res is the IsError result to return.
func (t *Tool) commandLine(args json.RawMessage) (argv []string, res toolsys.Result, ok bool) {
	invalid := func(err error) ([]string, toolsys.Result, bool) {
		return nil, toolsys.ErrorResult("invalid arguments for tool %s: %v", t.Name(), err), false
	}
	args, err := toolsys.StripEmptyOptionals(args, t.required)
	if err == nil {
		err = t.validator.Validate(args)
	}
	if err != nil {
		return invalid(err)
	}
	doc := map[string]any{}
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if doc, err = decodeObject(args); err != nil {
			return invalid(err)
		}
	}
	rest, err := t.help.Args(doc)
	if err != nil {
		return invalid(err)
	}
	return append([]string{t.stem}, rest...), toolsys.Result{}, true
}

// result maps a finished run to the model's result.
func (t *Tool) result(out *output, f failure) toolsys.Result {
	var res toolsys.Result
	if out.truncated() {
		res.Content = plainText(out.stdout) +
			fmt.Sprintf("\n\n[... output cut at %d bytes (wasm.output_limit); the tool wrote %d ...]", len(out.stdout), out.stdoutTotal)
		res.Metadata = map[string]any{"stdout_truncated": true, "stdout_size": out.stdoutTotal}
	} else {
		res = parseOutput(out.stdout)
	}
	var failed string
	switch {
	case f.timedOut:
		failed = fmt.Sprintf("tool %s did not finish within %s and was stopped", t.Name(), t.rt.cfg.Timeout)
	case f.trap != "":
		failed = fmt.Sprintf("tool %s trapped: %s", t.Name(), f.trap)
	case f.exitCode != 0:
		failed = fmt.Sprintf("tool %s exited with status %d", t.Name(), f.exitCode)
		if res.Metadata == nil {
			res.Metadata = map[string]any{}
		}
		res.Metadata["exit_code"] = f.exitCode
	default:
		return res
	}
	res.IsError = true
	if s := stderrHead(out, 2048); s != "" {
		failed += ": " + s
	}
	if res.Content != "" {
		failed += "\n\n" + res.Content
	}
	res.Content = failed
	return res
}

// log writes the run's standard error (when there is some) and how it
// ended to the call's logger.
func (t *Tool) log(tc *toolsys.Context, out *output, f failure) {
	if out == nil {
		return
	}
	ev := tc.Logger.Debug()
	if f.failed() {
		ev = tc.Logger.Info()
	}
	ev = ev.Str("tool", t.Name()).Int64("stdout_bytes", out.stdoutTotal).Int64("stderr_bytes", out.stderrTotal)
	switch {
	case f.canceled != nil:
		ev = ev.AnErr("canceled", f.canceled)
	case f.timedOut:
		ev = ev.Bool("timed_out", true)
	case f.trap != "":
		ev = ev.Str("trap", f.trap)
	case f.exitCode != 0:
		ev = ev.Uint32("exit_code", f.exitCode)
	}
	if len(out.stderr) > 0 {
		ev = ev.Str("stderr", string(bytes.ToValidUTF8(out.stderr, []byte("\uFFFD"))))
	}
	ev.Msg("wasm tool run")
}
