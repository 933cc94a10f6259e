package actors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// TestRetention_ModelCallReleased: once a turn has ended, nothing the idle
// session keeps reaches the requests and responses of its model calls
// (the history holds what the model said, not the calls).
func TestRetention_ModelCallReleased(t *testing.T) {
	var mu sync.Mutex
	var reqs []weak.Pointer[messages.Request]
	var resps []weak.Pointer[messages.Response]
	f := newFixture(t, toolScript("done", scripted.ToolCall{Name: "echo", Arguments: `{}`}), []toolsys.Tool{echoTool("echo")}, func(c *actors.Config) {
		c.IdleTimeout = -1
		c.Hooks.Register(actors.PostRequest, actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
			mu.Lock()
			defer mu.Unlock()
			reqs = append(reqs, weak.Make(hc.Request))
			resps = append(resps, weak.Make(hc.Response))
			return actors.HookResult{}
		}))
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sess.Status(t.Context()); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	mu.Lock()
	defer mu.Unlock()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d, want 2", len(reqs))
	}
	for i := range reqs {
		if reqs[i].Value() != nil {
			t.Errorf("the request of model call %d is still reachable after the turn", i+1)
		}
		if resps[i].Value() != nil {
			t.Errorf("the response of model call %d is still reachable after the turn", i+1)
		}
	}
}

// manualTimers arms clock timers of d only, and says when one is armed.
func armedFor(t *testing.T, clock *manualClock, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		select {
		case got := <-clock.armed:
			if got == d {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no timer of %v was armed", d)
		}
	}
}

// TestIdle_PassivatesAfterLongTurn: a session whose idle timer fires while
// a turn runs is passivated once it has been idle for the idle timeout
// (it used to stay active for good), and its next use reactivates it from
// the journal.
func TestIdle_PassivatesAfterLongTurn(t *testing.T) {
	const idle = time.Hour
	clock := newManualClock()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	slow := &funcTool{name: "slow", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		entered <- struct{}{}
		select {
		case <-release:
			return toolsys.Result{Content: "slow done"}, nil
		case <-ctx.Done():
			return toolsys.Result{}, ctx.Err()
		}
	}}
	f := newFixture(t, toolScript("finally", scripted.ToolCall{Name: "slow", Arguments: `{}`}), []toolsys.Tool{slow}, func(c *actors.Config) {
		c.IdleTimeout = idle
		c.Clock = clock
		c.Limits.ToolTimeout = -1
	})
	armedFor(t, clock, idle)
	done := make(chan error, 1)
	go func() {
		_, err := f.sess.Submit(t.Context(), messages.UserText("go"))
		done <- err
	}()
	<-entered
	// The idle timer fires mid-turn: the session must stay.
	clock.fire(idle)
	armedFor(t, clock, idle)
	if !slices.Contains(f.rt.Sessions(), "s1") {
		t.Fatal("the session was passivated in the middle of a turn")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The timer armed during the turn finds activity since, and is armed
	// again; the next one finds the session idle.
	clock.fire(idle)
	armedFor(t, clock, idle)
	clock.fire(idle)
	waitFor(t, func() bool { return !slices.Contains(f.rt.Sessions(), "s1") })

	st, err := f.sess.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Messages != 4 || st.NextTurn != 1 {
		t.Errorf("reactivated status = %+v, want 4 messages and next turn 1", st)
	}
}

// heapLive returns the live heap after collecting garbage.
func heapLive() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestIdle_HeapPerSession measures the heap that 1,000 idle sessions keep,
// each with a 10-message history in an on-disk journal. Resident (no idle
// timeout), a session keeps its actor and its history; passivated, it
// keeps nothing: the figure is taken between two rounds of passivating the
// same sessions (the second round reactivates each from its journal), so
// that what the first round leaves for good (protoactor's name registry
// grows and never shrinks) does not count.
func TestIdle_HeapPerSession(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 5,000 turns")
	}
	if raceEnabled {
		t.Skip("the race detector changes what the heap holds")
	}
	const n = 1000
	for _, tt := range []struct {
		name      string
		passivate bool
		bound     float64 // bytes per session
	}{
		{"resident", false, 12 << 10},
		{"passivated", true, 1 << 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := newManualClock()
			idle := time.Duration(-1)
			if tt.passivate {
				idle = time.Hour
			}
			rt, err := actors.New(actors.Config{DataDir: t.TempDir(), Durability: memory.DurabilityNone,
				Provider:    scripted.MustNew(textScript("The value of alpha is 42."), scripted.Options{}),
				IdleTimeout: idle, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_ = rt.Shutdown(ctx)
			})
			ctx := t.Context()
			sessions := make([]*actors.Session, n)
			start := func() {
				for i := range sessions {
					s, err := rt.Open(ctx, fmt.Sprintf("idle-%d", i))
					if err != nil {
						t.Fatal(err)
					}
					for range 5 {
						if _, err := s.Submit(ctx, messages.UserText("What is the value of alpha?")); err != nil {
							t.Fatal(err)
						}
					}
					sessions[i] = s
				}
			}
			// A timer that finds activity since it was armed is armed
			// again: fire until every session has gone.
			passivate := func() {
				waitFor(t, func() bool {
					clock.fire(idle)
					return len(rt.Sessions()) == 0
				})
			}
			var before uint64
			if tt.passivate {
				start()
				passivate()
				before = heapLive()
				for _, s := range sessions {
					st, err := s.Status(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if st.Messages != 10 {
						t.Fatalf("reactivated %s has %d messages, want 10", s.ID(), st.Messages)
					}
				}
				passivate()
			} else {
				before = heapLive()
				start()
			}
			per := (float64(heapLive()) - float64(before)) / n
			t.Logf("%s: %.0f B of heap per idle session", tt.name, per)
			if per > tt.bound {
				t.Errorf("%s: %.0f B of heap per idle session, want at most %.0f", tt.name, per, tt.bound)
			}
			runtime.KeepAlive(sessions)
		})
	}
}
