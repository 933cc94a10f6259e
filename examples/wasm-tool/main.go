// Command wasm-tool shows the whole life of a WebAssembly tool: write it,
// build it, drop it into a folder agcore watches, and call it.
//
// The tool, in ./wordcount, is an ordinary Go command-line program that
// follows the --help convention of docs/wasm-tools.md. The example builds
// it with the Go toolchain for WASI (GOOS=wasip1 GOARCH=wasm), copies it
// into a watched tool folder (under a dot-name, then renamed into place,
// so that a half-written file is never loaded), waits for the folder to
// register it, shows the schema generated from its --help, calls it
// through the registry (a result, a read that the sandbox refuses,
// arguments the validator refuses), lets a scripted model call it in a
// session, and removes it again.
//
// It needs the Go toolchain on PATH. Run it with:
//
//	go run ./examples/wasm-tool
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/wasm"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wasm-tool:", err)
		os.Exit(1)
	}
}

// toolPackage is the Go package of the tool.
const toolPackage = "github.com/agcore/agcore/examples/wasm-tool/wordcount"

func run(ctx context.Context, out io.Writer) (err error) {
	base, err := os.MkdirTemp("", "agcore-wasm-tool-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	toolsDir, cacheDir, wsDir := filepath.Join(base, "tools"), filepath.Join(base, "cache"), filepath.Join(base, "workspace")
	for _, d := range []string{toolsDir, wsDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	notes := "# Notes\nagcore runs WASM tools.\nWASM tools are sandboxed; agcore watches the tools folder.\n"
	if err := os.WriteFile(filepath.Join(wsDir, "notes.md"), []byte(notes), 0o600); err != nil {
		return err
	}

	// 1-2. Write and build: the tool is the Go program in ./wordcount.
	built := filepath.Join(base, "wordcount.wasm")
	fmt.Fprintf(out, "== 1. the tool: %s, a Go program that follows the --help convention\n", toolPackage)
	if err := build(ctx, built); err != nil {
		return err
	}
	fi, err := os.Stat(built)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "== 2. built with GOOS=wasip1 GOARCH=wasm go build: %d KiB\n", fi.Size()>>10)

	// 3. A registry, and a runtime that watches the tool folder. The zero
	// permission pipeline runs read-only tools without asking.
	reg := toolsys.NewRegistry(toolsys.Config{})
	rt, err := wasm.NewRuntime(ctx, wasm.Config{CacheDir: cacheDir})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Close(context.WithoutCancel(ctx))) }()
	changes := make(chan wasm.Change, 16)
	folder, err := rt.Folder(wasm.FolderConfig{Dir: toolsDir, Registry: reg, OnChange: func(c wasm.Change) { changes <- c }})
	if err != nil {
		return err
	}
	defer folder.Close()
	if err := folder.Watch(ctx); err != nil {
		return err
	}
	if err := drop(built, toolsDir, "wordcount.wasm"); err != nil {
		return err
	}
	c, err := waitFor(ctx, changes, wasm.Added)
	if err != nil {
		return err
	}
	info, _ := reg.Info(c.Tool)
	fmt.Fprintf(out, "== 3. dropped into the watched folder: %s %s (source %s, permission %s)\n",
		c.Kind, c.Tool, info.Source, info.Tool.Permission())
	var schema bytes.Buffer
	if err := json.Indent(&schema, info.Tool.Schema(), "   ", "  "); err != nil {
		return err
	}
	fmt.Fprintf(out, "   the schema generated from its --help:\n   %s\n", schema.String())

	// 4. Calls through the registry, in the workspace.
	ws, err := toolsys.NewWorkspace(wsDir)
	if err != nil {
		return err
	}
	defer ws.Close()
	tc := &toolsys.Context{Workspace: ws}
	fmt.Fprintln(out, "== 4. calls through the registry")
	for _, args := range []string{
		`{"path":"notes.md"}`,
		`{"path":"../../etc/hostname"}`,
		`{"path":"notes.md","top":"two"}`,
	} {
		res, err := reg.Call(ctx, "wordcount", json.RawMessage(args), tc)
		if err != nil {
			return err
		}
		mark := "ok   "
		if res.IsError {
			mark = "error"
		}
		fmt.Fprintf(out, "   %s\n     %s %s\n", args, mark, res.Content)
		if words, ok := res.Metadata["words"]; ok {
			fmt.Fprintf(out, "     metadata: words=%v lines=%v\n", words, res.Metadata["lines"])
		}
	}

	// 5. A scripted model calls the tool in a session.
	model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			ToolCalls: []scripted.ToolCall{{Name: "wordcount", Arguments: `{"path":"notes.md","top":1}`}},
		}},
		{Match: scripted.Match{Tool: "wordcount"}, Reply: scripted.Reply{Text: "notes.md has 15 words; the most frequent is \"tools\"."}},
	}}, scripted.Options{})
	if err != nil {
		return err
	}
	art, err := actors.NewInMemory(actors.Config{Provider: model, Tools: reg, Workspace: ws})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, art.Shutdown(context.WithoutCancel(ctx))) }()
	sess, err := art.Open(ctx, "wasm-tool")
	if err != nil {
		return err
	}
	const question = "How long is notes.md?"
	fmt.Fprintf(out, "== 5. a session\n   user:      %s\n", question)
	for ev, err := range sess.Stream(ctx, messages.UserText(question)) {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case messages.ToolStarted:
			fmt.Fprintf(out, "   call:      %s %s\n", e.Name, e.Arguments)
		case messages.ToolFinished:
			fmt.Fprintf(out, "   result:    %s\n", e.Content)
		case messages.TurnEnded:
			fmt.Fprintf(out, "   assistant: %s\n", e.Text)
		}
	}

	// 6. Removing the file unregisters the tool.
	if err := os.Remove(filepath.Join(toolsDir, "wordcount.wasm")); err != nil {
		return err
	}
	if c, err = waitFor(ctx, changes, wasm.Removed); err != nil {
		return err
	}
	_, still := reg.Get("wordcount")
	fmt.Fprintf(out, "== 6. removed from the folder: %s %s (still registered: %v)\n", c.Kind, c.Tool, still)
	return nil
}

// build compiles the tool for WASI into out.
func build(ctx context.Context, out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the Go toolchain is needed to build the tool: %w", err)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-o", out, toolPackage)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", toolPackage, err, b)
	}
	return nil
}

// drop copies the built tool into dir under a dot-name, which the folder
// ignores, then renames it into place in one step.
func drop(built, dir, name string) error {
	data, err := os.ReadFile(built)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// waitFor returns the next change of kind, reporting a refusal as an
// error.
func waitFor(ctx context.Context, changes <-chan wasm.Change, kind wasm.ChangeKind) (wasm.Change, error) {
	for {
		select {
		case c := <-changes:
			if c.Kind == wasm.Refused {
				return c, c.Err
			}
			if c.Kind == kind {
				return c, nil
			}
		case <-ctx.Done():
			return wasm.Change{}, fmt.Errorf("waiting for the tool to be %s: %w", strings.ToLower(kind.String()), ctx.Err())
		}
	}
}
