package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

func textProvider(t *testing.T) providers.Provider {
	t.Helper()
	return scripted.MustNew(scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}}}}, scripted.Options{})
}

func TestNewProvider_Options(t *testing.T) {
	tests := []struct {
		name string
		opts chaos.ProviderOptions
		ok   bool
	}{
		{"zero", chaos.ProviderOptions{}, true},
		{"all fail", chaos.ProviderOptions{FailRate: 1}, true},
		{"negative rate", chaos.ProviderOptions{FailRate: -0.1}, false},
		{"rate above one", chaos.ProviderOptions{FailRate: 1.5}, false},
		{"uninjectable kind", chaos.ProviderOptions{FailRate: 0.5, Kinds: []providers.Kind{providers.KindAuthentication}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chaos.NewProvider(textProvider(t), tt.opts)
			if (err == nil) != tt.ok {
				t.Fatalf("NewProvider(%+v) error = %v, want ok %v", tt.opts, err, tt.ok)
			}
			if err != nil && !errors.Is(err, chaos.ErrOptions) {
				t.Fatalf("error %v does not wrap ErrOptions", err)
			}
		})
	}
}

func TestProvider_FailsAFraction(t *testing.T) {
	const calls = 2000
	p, err := chaos.NewProvider(textProvider(t), chaos.ProviderOptions{FailRate: 0.2, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	req := messages.Request{Messages: []messages.Message{messages.UserText("hi")}}
	failed := map[providers.Kind]int64{}
	for range calls {
		resp, err := p.Chat(t.Context(), req)
		if err != nil {
			var pe *providers.Error
			if !errors.As(err, &pe) || !errors.Is(err, chaos.ErrInjected) || !providers.IsRetryable(err) {
				t.Fatalf("injected error %v: want a retryable *providers.Error wrapping ErrInjected", err)
			}
			failed[pe.Kind]++
			continue
		}
		if resp.Message.Text() != "ok" {
			t.Fatalf("reply = %q", resp.Message.Text())
		}
	}
	st := p.Stats()
	if st.Calls != calls || st.Failed() != failed[providers.KindRateLimited]+failed[providers.KindServer]+failed[providers.KindTimeout] {
		t.Fatalf("stats %+v disagree with the failures seen %v", st, failed)
	}
	// 20% of 2000 is 400; the draws are seeded, so the bounds only guard
	// against a rate computed wrongly.
	if n := st.Failed(); n < 300 || n > 500 {
		t.Fatalf("%d of %d calls failed, want about 400", n, calls)
	}
	for _, k := range []providers.Kind{providers.KindRateLimited, providers.KindServer, providers.KindTimeout} {
		if failed[k] == 0 {
			t.Errorf("no %s failure injected", k)
		}
	}
}

func TestProvider_SameSeedSameFaults(t *testing.T) {
	run := func() []bool {
		p, err := chaos.NewProvider(textProvider(t), chaos.ProviderOptions{FailRate: 0.3, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		var out []bool
		for range 100 {
			_, err := p.Stream(t.Context(), messages.Request{Messages: []messages.Message{messages.UserText("hi")}})
			out = append(out, err != nil)
		}
		return out
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("call %d: the same seed gave different faults", i+1)
		}
	}
}

func newOKTool() toolsys.Tool {
	return toolsys.Bridge[struct{}](okTool{})
}

type okTool struct{}

func (okTool) Name() string                   { return "ok" }
func (okTool) Description() string            { return "answers ok" }
func (okTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (okTool) SecretParams() []string         { return nil }
func (okTool) Execute(context.Context, struct{}, *toolsys.Context) (toolsys.Result, error) {
	return toolsys.Result{Content: "ok"}, nil
}

func TestNewToolSet_Options(t *testing.T) {
	reg := toolsys.NewRegistry(toolsys.Config{})
	tests := []struct {
		name string
		opts chaos.ToolOptions
		ok   bool
	}{
		{"zero", chaos.ToolOptions{}, true},
		{"rates", chaos.ToolOptions{PanicRate: 0.1, HangRate: 0.05}, true},
		{"sum above one", chaos.ToolOptions{PanicRate: 0.6, HangRate: 0.6}, false},
		{"negative", chaos.ToolOptions{HangRate: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chaos.NewToolSet(reg, tt.opts)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, chaos.ErrOptions)) {
				t.Fatalf("NewToolSet(%+v) error = %v, want ok %v", tt.opts, err, tt.ok)
			}
			_, err = chaos.NewTool(newOKTool(), tt.opts)
			if (err == nil) != tt.ok {
				t.Fatalf("NewTool(%+v) error = %v, want ok %v", tt.opts, err, tt.ok)
			}
		})
	}
}

// call runs fn and reports the panic value it raised, if any.
func call(fn func() (toolsys.Result, error)) (res toolsys.Result, panicked any, err error) {
	defer func() { panicked = recover() }()
	res, err = fn()
	return res, nil, err
}

func TestToolSet_PanicsAndHangs(t *testing.T) {
	reg := toolsys.NewRegistry(toolsys.Config{})
	reg.MustRegister(newOKTool())
	set, err := chaos.NewToolSet(reg, chaos.ToolOptions{PanicRate: 0.1, HangRate: 0.05, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	const calls = 1000
	var panics, hangs, oks int64
	for i := range calls {
		ctx, cancel := context.WithCancel(t.Context())
		// A hanging call returns once its context is done: cancel it up
		// front so that the loop never waits.
		cancel()
		res, p, err := call(func() (toolsys.Result, error) {
			return set.Call(ctx, "ok", json.RawMessage(`{}`), &toolsys.Context{CallID: "c"})
		})
		switch {
		case p != nil:
			v, ok := p.(chaos.PanicValue)
			if !ok || v.Tool != "ok" || v.CallID != "c" || !strings.Contains(v.String(), "injected panic") {
				t.Fatalf("call %d panicked with %#v", i, p)
			}
			panics++
		case err != nil:
			if !errors.Is(err, chaos.ErrInjected) || !errors.Is(err, context.Canceled) {
				t.Fatalf("call %d: hang error %v", i, err)
			}
			hangs++
		default:
			if res.Content != "ok" {
				t.Fatalf("call %d: result %+v", i, res)
			}
			oks++
		}
	}
	st := set.Stats()
	if st.Calls != calls || st.Panics != panics || st.Hangs != hangs {
		t.Fatalf("stats %+v, seen %d panics %d hangs", st, panics, hangs)
	}
	if panics < 60 || panics > 140 || hangs < 25 || hangs > 80 {
		t.Fatalf("%d panics and %d hangs in %d calls, want about 100 and 50", panics, hangs, calls)
	}
	if _, ok := set.Get("ok"); !ok || len(set.Definitions()) != 1 {
		t.Fatal("the set does not expose the wrapped tools")
	}
}

func TestToolSet_Only(t *testing.T) {
	reg := toolsys.NewRegistry(toolsys.Config{})
	reg.MustRegister(newOKTool())
	set, err := chaos.NewToolSet(reg, chaos.ToolOptions{PanicRate: 1, Only: []string{"other"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := set.Call(t.Context(), "ok", json.RawMessage(`{}`), &toolsys.Context{})
	if err != nil || res.Content != "ok" {
		t.Fatalf("a tool outside Only got a fault: %+v, %v", res, err)
	}
}

func TestTool_PanicRecoveredByRegistry(t *testing.T) {
	tool, err := chaos.NewTool(newOKTool(), chaos.ToolOptions{PanicRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsys.NewRegistry(toolsys.Config{})
	reg.MustRegister(tool)
	res, err := reg.Call(t.Context(), "ok", json.RawMessage(`{}`), &toolsys.Context{CallID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content, "panicked") {
		t.Fatalf("result = %+v, want a recovered panic", res)
	}
	if st := tool.Stats(); st.Calls != 1 || st.Panics != 1 {
		t.Fatalf("stats = %+v", st)
	}
}
