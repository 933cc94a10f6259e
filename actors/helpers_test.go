package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// funcTool is a tool whose behaviour is a function.
type funcTool struct {
	name string
	perm toolsys.Permission
	idem bool
	fn   func(ctx context.Context, args json.RawMessage) (toolsys.Result, error)
}

func (f *funcTool) Name() string        { return f.name }
func (f *funcTool) Description() string { return "test tool " + f.name }
func (f *funcTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (f *funcTool) Permission() toolsys.Permission {
	return f.perm
}
func (f *funcTool) SecretParams() []string { return nil }
func (f *funcTool) Idempotent() bool       { return f.idem }
func (f *funcTool) Execute(ctx context.Context, args json.RawMessage, _ *toolsys.Context) (toolsys.Result, error) {
	return f.fn(ctx, args)
}

// runAllRegistry returns a registry whose tools all run without an
// approver, as these tests' write tools must: they exercise the runtime,
// not the permission pipeline.
func runAllRegistry(t *testing.T) *toolsys.Registry {
	t.Helper()
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeBypass})
	if err != nil {
		t.Fatal(err)
	}
	return toolsys.NewRegistry(toolsys.Config{Permissions: perms})
}

func echoTool(name string) *funcTool {
	return &funcTool{name: name, perm: toolsys.PermReadOnly, fn: func(_ context.Context, args json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{Content: name + ":" + string(args)}, nil
	}}
}

// toolScript answers a user message with calls, and a tool message with
// final.
func toolScript(final string, calls ...scripted.ToolCall) scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{
		{Name: "calls", Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{ToolCalls: calls}},
		{Name: "final", Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: final}},
	}}
}

func textScript(text string) scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: text}}}}
}

type fixture struct {
	rt   *actors.Runtime
	sess *actors.Session
	prov *scripted.Provider
}

// newFixture starts an in-memory runtime over script and tools, lets mod
// adjust the config, and opens session "s1".
func newFixture(t *testing.T, script scripted.Script, tools []toolsys.Tool, mod func(*actors.Config)) *fixture {
	t.Helper()
	prov, err := scripted.New(script, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := runAllRegistry(t)
	for _, tool := range tools {
		reg.MustRegister(tool)
	}
	cfg := actors.Config{Provider: prov, Tools: reg}
	if mod != nil {
		mod(&cfg)
	}
	rt, err := actors.NewInMemory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// A test may have shut the runtime down itself.
		if err := rt.Shutdown(ctx); err != nil && !errors.Is(err, actors.ErrClosed) {
			t.Errorf("Shutdown: %v", err)
		}
	})
	sess, err := rt.Open(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{rt: rt, sess: sess, prov: prov}
}

// recorder collects hook invocations.
type recorder struct {
	mu    sync.Mutex
	calls []*actors.HookContext
}

func (r *recorder) hook(result actors.HookResult) actors.Hook {
	return actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
		r.mu.Lock()
		defer r.mu.Unlock()
		cp := *hc
		if hc.Request != nil {
			req := *hc.Request
			req.Messages = append([]messages.Message(nil), hc.Request.Messages...)
			cp.Request = &req
		}
		r.calls = append(r.calls, &cp)
		return result
	})
}

func (r *recorder) events() []actors.HookEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]actors.HookEvent, len(r.calls))
	for i, c := range r.calls {
		out[i] = c.Event
	}
	return out
}

func (r *recorder) last(ev actors.HookEvent) *actors.HookContext {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.calls) - 1; i >= 0; i-- {
		if r.calls[i].Event == ev {
			return r.calls[i]
		}
	}
	return nil
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
