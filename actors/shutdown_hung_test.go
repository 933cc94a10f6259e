package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// TestShutdown_ReturnsWhenItsContextEnds runs a tool that ignores its
// context and never returns by itself: Shutdown gives up on it when its
// own context ends, and says so, instead of waiting for the tool.
func TestShutdown_ReturnsWhenItsContextEnds(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	stuck := &funcTool{name: "stuck", perm: toolsys.PermReadOnly, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		close(entered)
		<-release // ignores its context
		return toolsys.Result{Content: "late"}, nil
	}}
	f := newFixture(t, toolScript("done", scripted.ToolCall{Name: "stuck", Arguments: "{}"}), []toolsys.Tool{stuck}, nil)
	go func() { _, _ = f.sess.Submit(context.Background(), messages.UserText("go")) }()
	select {
	case <-entered:
	case <-t.Context().Done():
		t.Fatal("the tool never started")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.rt.Shutdown(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown = %v, want it to report its context's deadline", err)
		}
	case <-t.Context().Done():
		t.Fatal("Shutdown is still waiting for a tool that ignores its context")
	}
	if _, err := f.rt.Open(t.Context(), "s2"); !errors.Is(err, actors.ErrClosed) {
		t.Errorf("Open after Shutdown = %v, want ErrClosed", err)
	}
}
