package wasm_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/wasm"
)

// changes collects the changes of a folder for a test to wait on.
type changes chan wasm.Change

func (c changes) record(ch wasm.Change) { c <- ch }

// next waits for the next change of kind on file; a minute without it
// fails the test rather than hanging it.
func (c changes) next(t *testing.T, kind wasm.ChangeKind, file string) wasm.Change {
	t.Helper()
	giveUp := time.After(time.Minute)
	for {
		select {
		case ch := <-c:
			if ch.Kind == kind && filepath.Base(ch.Path) == file {
				return ch
			}
		case <-giveUp:
			t.Fatalf("no %s change for %s", kind, file)
		}
	}
}

func newFolder(t *testing.T, rt *wasm.Runtime, dir string, reg *toolsys.Registry) (*wasm.Folder, changes) {
	t.Helper()
	ch := make(changes, 64)
	f, err := rt.Folder(wasm.FolderConfig{Dir: dir, Registry: reg, OnChange: ch.record})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f, ch
}

func TestFolder_SyncLoadsWhatLoadsAndNamesWhatDoesNot(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	dir := t.TempDir()
	copyTool(t, "codec", dir, "codec.wasm")
	copyTool(t, "meta", dir, "meta.wasm")
	bad := copyTool(t, "badhelp", dir, "badhelp.wasm")
	for name, data := range map[string]string{"notes.txt": "not a tool", ".partial.wasm": "half a file", "junk.wasm": "not wasm"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reg := openRegistry(t, nil)
	f, ch := newFolder(t, rt, dir, reg)

	err := f.Sync(t.Context())
	var he *wasm.HelpError
	if !errors.As(err, &he) || he.Line != 5 || he.File != bad {
		t.Fatalf("Sync = %v, want a HelpError for %s line 5", err, bad)
	}
	if msg := err.Error(); !strings.Contains(msg, bad+": --help line 5: param --ratio: unknown type \"float\"") {
		t.Errorf("the error does not name the file and the line: %s", msg)
	}
	if !strings.Contains(err.Error(), "junk.wasm: compiling") {
		t.Errorf("the error does not name junk.wasm: %s", err)
	}
	if got := strings.Join(reg.Names(), ","); got != "codec,meta" {
		t.Fatalf("registered %s, want codec,meta", got)
	}
	if got := strings.Join(f.Tools(), ","); got != "codec,meta" {
		t.Errorf("Tools = %s", got)
	}
	if got := len(f.Refused()); got != 2 {
		t.Errorf("Refused has %d errors, want 2 (badhelp, junk)", got)
	}
	// Unchanged files are neither loaded nor reported again, and stay
	// refused.
	if again := f.Sync(t.Context()); !errors.As(again, &he) || again.Error() != err.Error() {
		t.Errorf("a second Sync = %v, want the same refusals", again)
	}
	refusedTwice := map[string]int{}
	for len(ch) > 0 {
		if c := <-ch; c.Kind == wasm.Refused {
			refusedTwice[filepath.Base(c.Path)]++
		}
	}
	if refusedTwice["badhelp.wasm"] != 1 || refusedTwice["junk.wasm"] != 1 {
		t.Errorf("refusals reported %v, want each file once", refusedTwice)
	}
	for _, name := range []string{"codec", "meta"} {
		if info, _ := reg.Info(name); info.Source != toolsys.SourceWASM {
			t.Errorf("%s has source %q", name, info.Source)
		}
	}
	if res, _ := reg.Call(t.Context(), "codec", json.RawMessage(`{"mode":"encode","input":"hi"}`), nil); res.Content != "aGk=" {
		t.Errorf("codec = %+v", res)
	}

	if err := os.Remove(filepath.Join(dir, "codec.wasm")); err != nil {
		t.Fatal(err)
	}
	_ = f.Sync(t.Context())
	if got := strings.Join(reg.Names(), ","); got != "meta" {
		t.Errorf("after removing codec.wasm, registered %s, want meta", got)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(reg.Names()); got != 0 {
		t.Errorf("Close left %d tools registered", got)
	}
}

func TestFolder_NameTakenIsRefusedUntilFree(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	dir := t.TempDir()
	copyTool(t, "codec", dir, "codec.wasm")
	copyTool(t, "meta", dir, "meta.wasm")
	reg := openRegistry(t, nil)
	builtin := toolsys.Bridge[codecParams](nativeCodec{})
	reg.MustRegister(builtin)
	f, ch := newFolder(t, rt, dir, reg)

	err := f.Sync(t.Context())
	if !errors.Is(err, wasm.ErrNameTaken) || !strings.Contains(err.Error(), `"codec" is registered by a tool of source builtin`) {
		t.Fatalf("Sync = %v, want ErrNameTaken naming the other tool", err)
	}
	if cur, _ := reg.Get("codec"); cur != builtin {
		t.Error("the folder replaced the tool registered first")
	}
	if _, ok := reg.Get("meta"); !ok {
		t.Error("meta is not registered: one refusal stopped the folder")
	}
	ch.next(t, wasm.Refused, "codec.wasm")

	reg.Unregister("codec")
	if err := f.Sync(t.Context()); err != nil {
		t.Fatalf("Sync once the name is free = %v", err)
	}
	ch.next(t, wasm.Added, "codec.wasm")
	if info, _ := reg.Info("codec"); info.Source != toolsys.SourceWASM {
		t.Errorf("codec = %+v, want the folder's tool", info)
	}
}

func TestFolder_WatchFollowsTheFolder(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	dir := t.TempDir()
	reg := openRegistry(t, nil)
	f, ch := newFolder(t, rt, dir, reg)
	if err := f.Watch(t.Context()); err != nil {
		t.Fatal(err)
	}
	call := func(name, args string) toolsys.Result {
		t.Helper()
		res, err := reg.Call(t.Context(), name, json.RawMessage(args), nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// drop copies a tool in under a dot-name, then renames it into place.
	drop := func(tool, file string) {
		t.Helper()
		tmp := copyTool(t, tool, dir, "."+file+".tmp")
		if err := os.Rename(tmp, filepath.Join(dir, file)); err != nil {
			t.Fatal(err)
		}
	}

	drop("codec", "tool.wasm")
	if c := ch.next(t, wasm.Added, "tool.wasm"); c.Tool != "codec" {
		t.Errorf("added %+v, want codec", c)
	}
	if res := call("codec", `{"mode":"encode","input":"hi"}`); res.Content != "aGk=" {
		t.Errorf("codec = %+v", res)
	}

	drop("meta", "tool.wasm") // a changed file is recompiled
	if c := ch.next(t, wasm.Replaced, "tool.wasm"); c.Tool != "meta" {
		t.Errorf("replaced %+v, want meta", c)
	}
	if res := call("codec", `{}`); !res.IsError || !strings.Contains(res.Content, "unknown tool") {
		t.Errorf("codec after its file became meta = %+v", res)
	}
	if res := call("meta", `{"text":"x","plain":true}`); res.Content != "x" {
		t.Errorf("meta = %+v", res)
	}

	if err := os.WriteFile(filepath.Join(dir, "tool.wasm"), []byte("\x00asm broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := ch.next(t, wasm.Refused, "tool.wasm")
	var le *wasm.LoadError
	if !errors.As(c.Err, &le) || le.Path != filepath.Join(dir, "tool.wasm") {
		t.Errorf("refusal = %v, want a LoadError naming the file", c.Err)
	}
	if _, ok := reg.Get("meta"); ok {
		t.Error("meta stayed registered although its file no longer loads")
	}

	drop("codec", "tool.wasm")
	ch.next(t, wasm.Added, "tool.wasm")
	if err := os.Remove(filepath.Join(dir, "tool.wasm")); err != nil {
		t.Fatal(err)
	}
	ch.next(t, wasm.Removed, "tool.wasm")
	if names := reg.Names(); len(names) != 0 {
		t.Errorf("after the removal, registered %v", names)
	}

	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	copyTool(t, "codec", dir, "late.wasm")
	if err := f.Sync(t.Context()); err == nil || slices.Contains(reg.Names(), "codec") {
		t.Errorf("a closed folder synced (%v) or registered %v", err, reg.Names())
	}
}

func TestFolder_CallInFlightSurvivesRemoval(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	dir := t.TempDir()
	copyTool(t, "loop", dir, "loop.wasm")
	running := make(chan struct{}, 1)
	reg := openRegistry(t, nil)
	f, _ := newFolder(t, rt, dir, reg)
	if err := f.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	tool, _ := reg.Get("loop")
	wasm.SetBeforeRun(rt, func() { running <- struct{}{} })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := tool.Execute(ctx, json.RawMessage(`{}`), nil)
		done <- err
	}()
	<-running
	if err := os.Remove(filepath.Join(dir, "loop.wasm")); err != nil {
		t.Fatal(err)
	}
	_ = f.Sync(t.Context())
	if _, ok := reg.Get("loop"); ok {
		t.Fatal("loop is still registered")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the call in flight ended with %v, want its own cancellation", err)
	}
	if _, err := tool.Execute(t.Context(), json.RawMessage(`{}`), nil); !errors.Is(err, wasm.ErrClosed) {
		t.Errorf("a call after the removal = %v, want ErrClosed", err)
	}
}

func TestRuntime_Folder_Config(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	reg := openRegistry(t, nil)
	for _, tt := range []struct {
		cfg  wasm.FolderConfig
		want string
	}{
		{wasm.FolderConfig{Registry: reg}, "FolderConfig.Dir"},
		{wasm.FolderConfig{Dir: t.TempDir()}, "FolderConfig.Registry"},
		{wasm.FolderConfig{Dir: t.TempDir(), Registry: reg, Debounce: -1}, "FolderConfig.Debounce"},
	} {
		if _, err := rt.Folder(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Folder(%+v) = %v, want an error naming %s", tt.cfg, err, tt.want)
		}
	}
	f, err := rt.Folder(wasm.FolderConfig{Dir: filepath.Join(t.TempDir(), "missing"), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(t.Context()); err != nil {
		t.Errorf("Sync of a missing folder = %v, want no tools and no error", err)
	}
	if err := f.Watch(t.Context()); err == nil {
		t.Error("Watch of a missing folder succeeded")
	}
}

func TestFolder_StoppedLoadIsTriedAgain(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	dir := t.TempDir()
	copyTool(t, "codec", dir, "codec.wasm")
	reg := openRegistry(t, nil)
	f, _ := newFolder(t, rt, dir, reg)
	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	_ = f.Sync(stopped)
	if len(reg.Names()) != 0 || len(f.Refused()) != 0 {
		t.Fatalf("a stopped scan registered %v and refused %v", reg.Names(), f.Refused())
	}
	if err := f.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Get("codec"); !ok {
		t.Error("the file whose load was stopped was not loaded by the next scan")
	}
}
