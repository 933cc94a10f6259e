package wasm_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/wasm"
)

// recorder remembers the tool names of every model request.
type recorder struct {
	providers.Provider
	mu    sync.Mutex
	tools [][]string
}

func (r *recorder) record(req messages.Request) {
	var names []string
	for _, d := range req.Tools {
		names = append(names, d.Name)
	}
	r.mu.Lock()
	r.tools = append(r.tools, names)
	r.mu.Unlock()
}

func (r *recorder) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	r.record(req)
	return r.Provider.Chat(ctx, req)
}

func (r *recorder) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	r.record(req)
	return r.Provider.Stream(ctx, req)
}

// turn runs one turn of sess and returns its tool results by tool name
// and how it ended.
func turn(t *testing.T, sess *actors.Session, text string) (map[string][]messages.ToolFinished, messages.TurnEnded) {
	t.Helper()
	results := map[string][]messages.ToolFinished{}
	var ended messages.TurnEnded
	for ev, err := range sess.Stream(t.Context(), messages.UserText(text)) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case messages.ToolFinished:
			results[e.Name] = append(results[e.Name], e)
		case messages.TurnEnded:
			ended = e
		}
	}
	return results, ended
}

func TestActors_FailingWASMToolsDoNotStopTheTurn(t *testing.T) {
	rt := newRuntime(t, wasm.Config{Timeout: time.Second})
	reg := openRegistry(t, nil)
	for _, name := range []string{"crash", "loop", "escape_write", "codec"} {
		reg.MustRegister(load(t, rt, name), toolsys.WithSource(toolsys.SourceWASM))
	}
	outside := t.TempDir()
	ws := workspace(t)
	if err := os.Symlink(outside, filepath.Join(ws.Root(), "out")); err != nil {
		t.Fatal(err)
	}
	escapeArgs, _ := json.Marshal(map[string]any{"write": []string{"out/pwned.txt", "../pwned.txt"}})
	model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			{Name: "crash", Arguments: `{"how":"panic"}`},
			{Name: "crash", Arguments: `{"how":"trap"}`},
			{Name: "loop", Arguments: `{}`},
			{Name: "escape_write", Arguments: string(escapeArgs)},
		}}},
		{Match: scripted.Match{Tool: "escape_write"}, Reply: scripted.Reply{
			Text:      "Those failed; encoding instead.",
			ToolCalls: []scripted.ToolCall{{Name: "codec", Arguments: `{"mode":"encode","input":"hi"}`}},
		}},
		{Match: scripted.Match{Tool: "codec"}, Reply: scripted.Reply{Text: "hi is aGk= in base64."}},
	}}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	art, err := actors.NewInMemory(actors.Config{Provider: model, Tools: reg, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = art.Shutdown(context.Background()) }()
	sess, err := art.Open(t.Context(), "wasm")
	if err != nil {
		t.Fatal(err)
	}

	results, ended := turn(t, sess, "try everything")
	if ended.Outcome != messages.OutcomeCompleted || ended.Text != "hi is aGk= in base64." {
		t.Fatalf("turn ended %+v, want completed with the final reply", ended)
	}
	crash := results["crash"]
	if len(crash) != 2 || !crash[0].IsError || !crash[1].IsError {
		t.Fatalf("crash results = %+v, want two error results", crash)
	}
	joined := crash[0].Content + "\n" + crash[1].Content
	for _, want := range []string{"panic: crash asked to panic", "trapped: wasm error: out of bounds memory access"} {
		if !strings.Contains(joined, want) {
			t.Errorf("crash results lack %q:\n%s", want, joined)
		}
	}
	if r := results["loop"]; len(r) != 1 || !r[0].IsError || !strings.Contains(r[0].Content, "did not finish within 1s") {
		t.Errorf("loop result = %+v", r)
	}
	if r := results["escape_write"]; len(r) != 1 || r[0].IsError {
		t.Errorf("escape result = %+v", r)
	}
	if _, err := os.Stat(filepath.Join(outside, "pwned.txt")); err == nil {
		t.Error("the escaping tool wrote outside the workspace")
	}
	if r := results["codec"]; len(r) != 1 || r[0].IsError || r[0].Content != "aGk=" {
		t.Errorf("codec result = %+v", r)
	}
}

func TestActors_ToolsDroppedInAreSeenByLaterTurns(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	reg := openRegistry(t, nil)
	dir := t.TempDir()
	f, ch := newFolder(t, rt, dir, reg)
	if err := f.Watch(t.Context()); err != nil {
		t.Fatal(err)
	}
	model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			ToolCalls: []scripted.ToolCall{{Name: "codec", Arguments: `{"mode":"encode","input":"hi"}`}},
		}},
		{Match: scripted.Match{Tool: "codec", Contains: "unknown tool"}, Reply: scripted.Reply{Text: "no codec yet"}},
		{Match: scripted.Match{Tool: "codec"}, Reply: scripted.Reply{Text: "encoded"}},
	}}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Provider: model}
	art, err := actors.NewInMemory(actors.Config{Provider: rec, Tools: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = art.Shutdown(context.Background()) }()
	sess, err := art.Open(t.Context(), "hot")
	if err != nil {
		t.Fatal(err)
	}

	if _, ended := turn(t, sess, "encode hi"); ended.Text != "no codec yet" {
		t.Fatalf("first turn ended %+v, want the tool to be unknown", ended)
	}
	copyTool(t, "codec", dir, "codec.wasm")
	ch.next(t, wasm.Added, "codec.wasm")
	results, ended := turn(t, sess, "encode hi again")
	if ended.Text != "encoded" || len(results["codec"]) != 1 || results["codec"][0].Content != "aGk=" {
		t.Fatalf("second turn = %+v, %+v, want the dropped tool to run", ended, results)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if first, last := rec.tools[0], rec.tools[len(rec.tools)-1]; slices.Contains(first, "codec") || !slices.Contains(last, "codec") {
		t.Errorf("tools offered to the model: first turn %v, second turn %v", first, last)
	}
}
