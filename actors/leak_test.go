package actors_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// gateProvider passes requests to a scripted model, except that a request
// whose last user message is "hang" is announced on hanging and blocks
// until its context ends.
type gateProvider struct {
	inner   providers.Provider
	hanging chan struct{}
}

func (g *gateProvider) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	return g.inner.Chat(ctx, req)
}

func (g *gateProvider) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	var last string
	for _, m := range req.Messages {
		if m.Role == messages.RoleUser {
			last = m.Text()
		}
	}
	if last == "hang" {
		g.hanging <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return g.inner.Stream(ctx, req)
}

// leakScript answers "tools" with a call of echo and "block" with a call of
// block, any tool result with "done", and anything else with "ok".
func leakScript() scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Exact: "tools"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			{Name: "echo", Arguments: `{}`}, {Name: "echo", Arguments: `{"n":2}`}}}},
		{Match: scripted.Match{Exact: "block"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "block", Arguments: `{}`}}}},
		{Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "done"}},
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}},
	}}
}

// leakRuntime is a runtime whose "block" tool announces itself on started
// and waits for its context.
type leakRuntime struct {
	rt      *actors.Runtime
	prov    *gateProvider
	started chan struct{}
}

func newLeakRuntime(t *testing.T, cfg actors.Config) *leakRuntime {
	t.Helper()
	lr := &leakRuntime{prov: &gateProvider{inner: scripted.MustNew(leakScript(), scripted.Options{}), hanging: make(chan struct{}, 1)},
		started: make(chan struct{}, 1)}
	block := &funcTool{name: "block", fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		lr.started <- struct{}{}
		<-ctx.Done()
		return toolsys.Result{}, ctx.Err()
	}}
	reg := toolsys.NewRegistry(toolsys.Config{})
	reg.MustRegister(echoTool("echo"))
	reg.MustRegister(block)
	cfg.Provider, cfg.Tools = lr.prov, reg
	var err error
	if cfg.DataDir != "" {
		lr.rt, err = actors.New(cfg)
	} else {
		lr.rt, err = actors.NewInMemory(cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return lr
}

func (lr *leakRuntime) shutdown(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := lr.rt.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// cancelled runs input in sess and cancels the turn once wait says it is
// in the model call or the tool.
func cancelled(t *testing.T, sess *actors.Session, input string, wait func()) {
	t.Helper()
	ended := make(chan error, 1)
	go func() {
		_, err := sess.Submit(context.Background(), messages.UserText(input))
		ended <- err
	}()
	wait()
	if ok, err := sess.Cancel(t.Context()); err != nil || !ok {
		t.Fatalf("Cancel = %v, %v", ok, err)
	}
	if err := <-ended; err == nil {
		t.Fatalf("turn %q was not cancelled", input)
	}
}

// TestLeak_Turns checks that the work of finished and cancelled turns is
// gone once they end, while the runtime and its sessions stay open.
func TestLeak_Turns(t *testing.T) {
	lr := newLeakRuntime(t, actors.Config{})
	defer lr.shutdown(t)
	var sessions []*actors.Session
	for _, id := range []string{"a", "b", "c"} {
		sess, err := lr.rt.Open(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, sess)
	}
	// Idle sessions and the runtime's own goroutines are owned by what is
	// still open; everything the turns start must be gone when they end.
	ignore := goleak.IgnoreCurrent()

	for _, sess := range sessions {
		for _, input := range []string{"hi", "tools"} {
			if _, err := sess.Submit(t.Context(), messages.UserText(input)); err != nil {
				t.Fatalf("%s: %v", input, err)
			}
		}
	}
	cancelled(t, sessions[0], "block", func() { <-lr.started })
	cancelled(t, sessions[1], "hang", func() { <-lr.prov.hanging })
	goleak.VerifyNone(t, ignore, deadLetterTimer)
}

// TestLeak_Shutdown checks that Shutdown stops everything a runtime
// started: actors, the journal's store, MCP connections, turns in flight.
func TestLeak_Shutdown(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	m := newMemServer(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "echo", InputSchema: messageSchema}, echoHandler)
	})
	tests := []struct {
		name string
		cfg  func(t *testing.T) actors.Config
	}{
		{"in memory", func(*testing.T) actors.Config { return actors.Config{} }},
		{"on disk with an MCP server", func(t *testing.T) actors.Config {
			return actors.Config{DataDir: t.TempDir(), MCPServers: []mcp.ServerConfig{m.config("mem")}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg(t)
			lr := newLeakRuntime(t, cfg)
			for _, server := range cfg.MCPServers {
				waitMCP(t, lr.rt, server.Name)
			}
			sess, err := lr.rt.Open(t.Context(), "s")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sess.Submit(t.Context(), messages.UserText("tools")); err != nil {
				t.Fatal(err)
			}
			// A turn still blocked in a tool when Shutdown gives up waiting
			// is cancelled.
			go func() { _, _ = sess.Submit(context.Background(), messages.UserText("block")) }()
			<-lr.started
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if err := lr.rt.Shutdown(ctx); err == nil {
				t.Error("Shutdown with a turn blocked in a tool returned nil, want the context's error")
			}
		})
	}
	m.closeSessions()
	goleak.VerifyNone(t, ignore, deadLetterTimer)
}

// deadLetterTimer ignores the goroutine protoactor starts at the first
// dead letter (a message to an actor that has stopped, common while a
// runtime shuts down) to throttle its dead-letter log: it waits for one
// DeadLetterThrottleInterval (a second) on a ticker of its own, then
// exits. Nothing can stop it sooner, and it holds nothing of the runtime.
var deadLetterTimer = goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1")

// fdCount counts the open file descriptors of the process.
func fdCount(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count file descriptors: %v", err)
	}
	return len(entries)
}

// TestLeak_FileDescriptors opens and shuts down a runtime on the same data
// directory several times: the count of open descriptors must come back.
func TestLeak_FileDescriptors(t *testing.T) {
	dir := t.TempDir()
	cycle := func(i int) {
		lr := newLeakRuntime(t, actors.Config{DataDir: dir, Durability: memory.DurabilitySync})
		sess, err := lr.rt.Open(t.Context(), "fd")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Submit(t.Context(), messages.UserText("tools")); err != nil {
			t.Fatal(err)
		}
		st, err := sess.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if st.NextTurn != i+1 {
			t.Fatalf("cycle %d: next turn %d, want %d: the journal did not survive", i, st.NextTurn, i+1)
		}
		lr.shutdown(t)
	}
	cycle(0) // the first open may set up process-wide descriptors
	before := fdCount(t)
	for i := 1; i <= 5; i++ {
		cycle(i)
	}
	if after := fdCount(t); after != before {
		t.Errorf("open file descriptors: %d before five open/shutdown cycles, %d after", before, after)
	}
}
