package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// clearedMemory is a session memory that records which sessions it was
// told to clear.
type clearedMemory struct {
	mu      sync.Mutex
	cleared []string
}

func (m *clearedMemory) Snapshot(context.Context, string) (string, error) { return "", nil }

func (m *clearedMemory) Clear(_ context.Context, session string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cleared = append(m.cleared, session)
	return nil
}

func TestRuntime_DeleteIdle(t *testing.T) {
	mem := &clearedMemory{}
	f := newFixture(t, textScript("hi"), nil, func(c *actors.Config) { c.SessionMemory = mem })
	if _, err := f.sess.Submit(t.Context(), messages.UserText("hello")); err != nil {
		t.Fatal(err)
	}
	if err := f.rt.Delete(t.Context(), "s1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if tail, err := f.rt.Journal().Tail(t.Context(), "s1"); err != nil || tail != 0 {
		t.Fatalf("journal tail after Delete = %d, %v; want 0", tail, err)
	}
	if slices.Contains(f.rt.Sessions(), "s1") {
		t.Error("s1 still active after Delete")
	}
	mem.mu.Lock()
	if !slices.Equal(mem.cleared, []string{"s1"}) {
		t.Errorf("session memory cleared %v, want [s1]", mem.cleared)
	}
	mem.mu.Unlock()
	for _, id := range []string{"s1", "nope"} {
		if err := f.rt.Delete(t.Context(), id); !errors.Is(err, actors.ErrSessionNotFound) {
			t.Errorf("Delete(%s) = %v, want ErrSessionNotFound", id, err)
		}
	}
	// The id starts afresh.
	st, err := f.sess.Status(t.Context())
	if err != nil || st.NextTurn != 0 || st.Messages != 0 {
		t.Fatalf("status after Delete = %+v, %v; want an empty session", st, err)
	}
}

func TestRuntime_DeleteRunning(t *testing.T) {
	started := make(chan struct{})
	hang := &funcTool{name: "hang", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		close(started)
		<-ctx.Done()
		return toolsys.Result{}, ctx.Err()
	}}
	script := toolScript("never", scripted.ToolCall{Name: "hang", Arguments: "{}"})
	script.Rules = append([]scripted.Rule{{Match: scripted.Match{Exact: "warm up"}, Reply: scripted.Reply{Text: "ok"}}}, script.Rules...)
	// The warm-up turns below run until the watch has seen an event; on a
	// busy machine the watching goroutine may attach and then not run for
	// many of them, so its buffer is made large enough that it is not cut
	// off as too slow before it drains.
	f := newFixture(t, script, []toolsys.Tool{hang}, func(c *actors.Config) { c.EventBuffer = 1 << 14 })
	watch, stopWatch := context.WithCancel(t.Context())
	defer stopWatch()
	watchErr := make(chan error, 1)
	watching := make(chan struct{})
	go func() {
		var once sync.Once
		for _, err := range f.sess.Watch(watch) {
			if err != nil {
				watchErr <- err
				return
			}
			once.Do(func() { close(watching) })
		}
	}()
	// The watch must follow the session before it is deleted: a watch
	// that starts afterwards follows the new, empty session.
	for watched := false; !watched; {
		if _, err := f.sess.Submit(t.Context(), messages.UserText("warm up")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-watching:
			watched = true
		default:
		}
	}
	ended := make(chan *actors.TurnResult, 1)
	go func() {
		res, _ := f.sess.Submit(t.Context(), messages.UserText("hang"))
		ended <- res
	}()
	<-started
	if err := f.rt.Delete(t.Context(), "s1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if res := <-ended; res == nil || res.Outcome != messages.OutcomeCancelled || res.Reason != "session deleted" {
		t.Fatalf("turn result = %+v, want cancelled by the deletion", res)
	}
	if err := <-watchErr; !errors.Is(err, actors.ErrSessionDeleted) {
		t.Errorf("watch ended with %v, want ErrSessionDeleted", err)
	}
	if _, err := f.rt.Journal().Load(t.Context(), "s1"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Load after Delete = %v, want ErrNotFound", err)
	}
}

func TestRuntime_AgentsAndJournal(t *testing.T) {
	f := newFixture(t, textScript("hi"), nil, func(c *actors.Config) {
		c.Agents = []actors.AgentProfile{{Name: "coder"}, {Name: "reviewer"}}
	})
	if got := f.rt.Agents(); !slices.Equal(got, []string{"coder", "reviewer"}) {
		t.Errorf("Agents = %v", got)
	}
	if tail, err := f.rt.Journal().Tail(t.Context(), "s1"); err != nil || tail == 0 {
		t.Errorf("Journal().Tail(s1) = %d, %v; want the activation", tail, err)
	}
}
