package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// refuseAppends is a journal that refuses the next n appends, once
// armed, with err: ErrNoSpace (as a full disk does, which stops the
// session for good) when err is nil, or err (which its supervisor answers
// by restarting it).
type refuseAppends struct {
	memory.Journal
	n   atomic.Int32
	err error
}

func (j *refuseAppends) Append(ctx context.Context, session string, act, tail uint64, evs ...messages.JournalEvent) (uint64, error) {
	if j.n.Add(-1) >= 0 {
		err := j.err
		if err == nil {
			err = memory.ErrNoSpace
		}
		return 0, fmt.Errorf("journal append %s after %d: %w", session, tail, err)
	}
	return j.Journal.Append(ctx, session, act, tail, evs...)
}

// errWrite is a write error that is not fatal: the session restarts.
var errWrite = errors.New("injected write error")

// refusingRuntime starts a runtime over a journal that refuses appends on
// demand with errWrite, with a session "s1" whose one tool call runs hang.
func refusingRuntime(t *testing.T, hang func(ctx context.Context) (toolsys.Result, error)) (*actors.Runtime, *actors.Session, *refuseAppends) {
	t.Helper()
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	base, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		t.Fatal(err)
	}
	j := &refuseAppends{Journal: base, err: errWrite}
	reg := runAllRegistry(t)
	reg.MustRegister(&funcTool{name: "hang", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		return hang(ctx)
	}})
	prov := scripted.MustNew(toolScript("done", scripted.ToolCall{Name: "hang", Arguments: `{}`}), scripted.Options{})
	rt, err := actors.New(actors.Config{Journal: j, Provider: prov, Tools: reg})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := rt.Open(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	return rt, sess, j
}

// TestDelete_StopOutlivesARefusedAppend deletes a session mid-turn while
// the append journaling the turn's cancellation is refused: the session's
// actor restarts, and the restarted actor still carries out the stop
// instead of forgetting it with the message that failed. Delete returns
// and the journal is gone.
func TestDelete_StopOutlivesARefusedAppend(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	started := make(chan struct{}, 2)
	rt, sess, j := refusingRuntime(t, func(ctx context.Context) (toolsys.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return toolsys.Result{}, ctx.Err()
	})
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	go func() { _, _ = sess.Submit(context.WithoutCancel(ctx), messages.UserText("go")) }()
	<-started

	j.n.Store(1) // the append of the stop's cancellation
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	if err := rt.Delete(dctx, "s1"); err != nil {
		t.Fatalf("Delete: %v (the restarted session forgot the stop)", err)
	}
	if tail, err := j.Tail(ctx, "s1"); err != nil || tail != 0 {
		t.Errorf("after Delete the journal's tail is %d, %v; want 0", tail, err)
	}
}

// TestShutdown_DrainOutlivesARefusedAppend shuts a runtime down while a
// turn runs, and the append of the tool's result is refused: the restarted
// session resumes the turn, and Shutdown learns that it ended, though the
// drain was asked of the instance that failed.
func TestShutdown_DrainOutlivesARefusedAppend(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	started := make(chan struct{}, 2)
	release := make(chan struct{})
	rt, sess, j := refusingRuntime(t, func(ctx context.Context) (toolsys.Result, error) {
		started <- struct{}{}
		select {
		case <-release:
			return toolsys.Result{Content: "ok"}, nil
		case <-ctx.Done():
			return toolsys.Result{}, ctx.Err()
		}
	})
	type outcome struct {
		res *actors.TurnResult
		err error
	}
	ended := make(chan outcome, 1)
	go func() {
		res, err := sess.Submit(context.WithoutCancel(ctx), messages.UserText("go"))
		ended <- outcome{res, err}
	}()
	<-started

	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	shut := make(chan error, 1)
	go func() { shut <- rt.Shutdown(sctx) }()
	// Shutdown asks the session to drain; the tool's result is then refused.
	waitFor(t, func() bool {
		_, err := rt.Open(ctx, "probe")
		return errors.Is(err, actors.ErrClosed)
	})
	j.n.Store(1)
	close(release)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v (the drain was forgotten by the restarted session)", err)
	}
	if o := <-ended; o.err != nil || o.res.Outcome != messages.OutcomeCompleted {
		t.Errorf("the turn ended with %+v, %v; want completed", o.res, o.err)
	}
}

// TestReopen_StaleWorkIsNotCounted stops a session by a refused append
// while one of its tool calls ignores its context and runs on; the session
// is opened again (a new actor at the same address) before that call
// returns. The late result of the stopped actor's call must not count as
// work of the new one: the new actor still knows when its own calls have
// returned, so it stops when deleted.
func TestReopen_StaleWorkIsNotCounted(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	base, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		t.Fatal(err)
	}
	j := &refuseAppends{Journal: base}
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	reg := runAllRegistry(t)
	reg.MustRegister(&funcTool{name: "slow", perm: toolsys.PermReadOnly, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		started <- struct{}{}
		<-release // ignores its context
		return toolsys.Result{Content: "slow done"}, nil
	}})
	quickRan := make(chan struct{}, 4)
	var quickCalls atomic.Int32
	reg.MustRegister(&funcTool{name: "quick", perm: toolsys.PermReadOnly, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		<-started // the slow call runs
		if quickCalls.Add(1) == 1 {
			j.n.Store(1) // the first call's result is refused
		}
		quickRan <- struct{}{}
		return toolsys.Result{Content: "quick done"}, nil
	}})
	prov := scripted.MustNew(toolScript("done",
		scripted.ToolCall{Name: "slow", Arguments: `{}`}, scripted.ToolCall{Name: "quick", Arguments: `{}`}), scripted.Options{})
	rt, err := actors.New(actors.Config{Journal: j, Provider: prov, Tools: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = rt.Shutdown(sctx)
	})
	sess, err := rt.Open(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	// The quick call's result is refused: the session stops, with the
	// slow call still running.
	if _, err := sess.Submit(ctx, messages.UserText("go")); !errors.Is(err, memory.ErrNoSpace) {
		t.Fatalf("Submit = %v, want the refused append's error", err)
	}
	<-quickRan

	// A new actor resumes the turn; both its calls run again (read-only),
	// the slow one waiting with the old one.
	sess, err = rt.Open(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	started <- struct{}{} // lets the resumed quick call through
	resumed := make(chan error, 1)
	go func() {
		_, err := sess.Submit(ctx, messages.UserText("again"))
		resumed <- err
	}()
	close(release)
	if err := <-resumed; err != nil {
		t.Fatalf("the next turn: %v", err)
	}

	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	if err := rt.Delete(dctx, "s1"); err != nil {
		t.Fatalf("Delete: %v (the session miscounted its calls in flight)", err)
	}
}
