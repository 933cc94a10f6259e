package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// fakeTool is a Tool whose Execute is a function.
type fakeTool struct {
	name string
	run  func(ctx context.Context, args json.RawMessage) (toolsys.Result, error)
}

func (f fakeTool) Name() string        { return f.name }
func (f fakeTool) Description() string { return "a test tool" }
func (f fakeTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (f fakeTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (f fakeTool) SecretParams() []string         { return nil }
func (f fakeTool) Idempotent() bool               { return true }
func (f fakeTool) Execute(ctx context.Context, args json.RawMessage, _ *toolsys.Context) (toolsys.Result, error) {
	return f.run(ctx, args)
}

func TestToolbox_RunAll(t *testing.T) {
	const parallel = 3
	var started sync.WaitGroup
	started.Add(parallel)
	reg := toolsys.NewRegistry(toolsys.Config{})
	for _, tool := range []fakeTool{
		// barrier returns only once all its calls have started, so it
		// proves that the calls of one reply run in parallel.
		{name: "barrier", run: func(ctx context.Context, args json.RawMessage) (toolsys.Result, error) {
			started.Done()
			done := make(chan struct{})
			go func() { started.Wait(); close(done) }()
			select {
			case <-done:
				return toolsys.Result{Content: string(args)}, nil
			case <-ctx.Done():
				return toolsys.Result{}, ctx.Err()
			}
		}},
		{name: "fails", run: func(context.Context, json.RawMessage) (toolsys.Result, error) {
			return toolsys.Result{}, errors.New("disk on fire")
		}},
		{name: "panics", run: func(context.Context, json.RawMessage) (toolsys.Result, error) {
			panic("boom")
		}},
	} {
		reg.MustRegister(tool)
	}
	tb := &toolbox{reg: reg, session: "s", log: zerolog.Nop()}
	calls := []messages.ToolCall{
		{ID: "c1", Name: "barrier", Arguments: `{"n":1}`},
		{ID: "c2", Name: "fails"},
		{ID: "c3", Name: "barrier", Arguments: `{"n":3}`},
		{ID: "c4", Name: "missing"},
		{ID: "c5", Name: "panics"},
		{ID: "c6", Name: "barrier", Arguments: ``},
	}
	got := tb.runAll(t.Context(), 0, calls)
	want := []toolsys.Result{
		{Content: `{"n":1}`},
		{Content: "tool fails: disk on fire", IsError: true},
		{Content: `{"n":3}`},
		{Content: `unknown tool "missing"; available tools: barrier, fails, panics`, IsError: true},
		{Content: "tool panics panicked: boom", IsError: true},
		{Content: `{}`},
	}
	for i := range want {
		if got[i].Content != want[i].Content || got[i].IsError != want[i].IsError {
			t.Errorf("result %d (%s) = %+v, want %+v", i, calls[i].Name, got[i], want[i])
		}
	}
}

func TestFileTools(t *testing.T) {
	reg, err := fileTools(zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range (&toolbox{reg: reg}).definitions() {
		names = append(names, d.Name)
		if d.Description == "" || !json.Valid(d.Parameters) {
			t.Errorf("definition %+v is incomplete", d)
		}
	}
	if got, want := strings.Join(names, ","), "edit_file,glob,grep,list_dir,read_file,write_file"; got != want {
		t.Errorf("tools %s, want %s", got, want)
	}
}
