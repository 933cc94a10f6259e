package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/supervisor"
)

var errFenced = errors.New("fenced")

func TestDeciders(t *testing.T) {
	retryable := func(err error) bool { return err.Error() == "busy" }
	tests := []struct {
		name    string
		decider supervisor.Decider
		reason  any
		want    supervisor.Directive
	}{
		{"session panic value restarts", supervisor.SessionDecider(errFenced), "index out of range", supervisor.Restart},
		{"session error restarts", supervisor.SessionDecider(errFenced), errors.New("disk"), supervisor.Restart},
		{"session fenced stops", supervisor.SessionDecider(errFenced), fmt.Errorf("append: %w", errFenced), supervisor.Stop},
		{"session unrecoverable stops", supervisor.SessionDecider(), supervisor.Unrecoverable(errors.New("x")), supervisor.Stop},
		{"tool panic resumes", supervisor.ToolDecider(), "nil map", supervisor.Resume},
		{"tool error resumes", supervisor.ToolDecider(), errors.New("x"), supervisor.Resume},
		{"retryable retries", supervisor.RetryDecider(retryable), errors.New("busy"), supervisor.Retry},
		{"non-retryable stops", supervisor.RetryDecider(retryable), errors.New("auth"), supervisor.Stop},
		{"cancelled stops", supervisor.RetryDecider(func(error) bool { return true }), context.Canceled, supervisor.Stop},
		{"an attempt's own deadline the classifier retries", supervisor.RetryDecider(func(error) bool { return true }),
			fmt.Errorf("stream idle: %w", context.DeadlineExceeded), supervisor.Retry},
		{"a deadline the classifier does not retry stops", supervisor.RetryDecider(retryable), context.DeadlineExceeded, supervisor.Stop},
		{"nil reason resumes", supervisor.RetryDecider(retryable), nil, supervisor.Resume},
		{"connection closed restarts", supervisor.ConnectionDecider(errFenced), errors.New("closed"), supervisor.Restart},
		{"connection fatal stops", supervisor.ConnectionDecider(errFenced), errFenced, supervisor.Stop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.decider.Decide(tt.reason); got != tt.want {
				t.Errorf("Decide(%v) = %v, want %v", tt.reason, got, tt.want)
			}
		})
	}
}

func TestAsError(t *testing.T) {
	base := errors.New("base")
	if got := supervisor.AsError(base); got != base {
		t.Errorf("AsError(error) = %v, want the error itself", got)
	}
	if supervisor.AsError(nil) != nil {
		t.Error("AsError(nil) != nil")
	}
	var pe *supervisor.PanicError
	if err := supervisor.AsError(42); !errors.As(err, &pe) || pe.Value != 42 || err.Error() != "panic: 42" {
		t.Errorf("AsError(42) = %v", err)
	}
	if err := (&supervisor.PanicError{Value: base}); !errors.Is(err, base) {
		t.Error("a PanicError holding an error does not unwrap to it")
	}
}

func TestBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := supervisor.NewBudget(supervisor.BudgetOptions{MaxFailures: 2, Window: time.Minute})
		if err := b.Fail("s", "one"); err != nil {
			t.Fatalf("first failure: %v", err)
		}
		if err := b.Fail("s", "two"); err != nil {
			t.Fatalf("second failure: %v", err)
		}
		if err := b.Fail("other", "x"); err != nil {
			t.Fatalf("another key shares the budget: %v", err)
		}
		// The window slides: after a minute the old failures no longer count.
		time.Sleep(time.Minute)
		if n := b.Failures("s"); n != 0 {
			t.Fatalf("Failures after the window = %d, want 0", n)
		}
		for i := range 2 {
			if err := b.Fail("s", i); err != nil {
				t.Fatalf("failure %d in a new window: %v", i, err)
			}
		}
		err := b.Fail("s", errors.New("third"))
		var be *supervisor.BudgetExhaustedError
		if !errors.As(err, &be) || !errors.Is(err, supervisor.ErrBudgetExhausted) || be.Failures != 3 || be.Last.Error() != "third" {
			t.Fatalf("third failure in the window = %v, want an exhausted budget", err)
		}
		if n := b.Failures("s"); n != 0 {
			t.Errorf("an exhausted budget keeps %d failures, want 0", n)
		}
	})
}

func TestBudgetNoneTolerated(t *testing.T) {
	b := supervisor.NewBudget(supervisor.BudgetOptions{MaxFailures: -1})
	if err := b.Fail("s", "x"); !errors.Is(err, supervisor.ErrBudgetExhausted) {
		t.Fatalf("Fail = %v, want exhausted at once", err)
	}
}

func TestBackoffDelay(t *testing.T) {
	b := supervisor.Backoff{Initial: time.Second, Max: 5 * time.Second, Jitter: -1}
	want := []time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for n, w := range want {
		if got := b.Delay(n, nil); got != w {
			t.Errorf("Delay(%d) = %v, want %v", n, got, w)
		}
	}
	jb := supervisor.Backoff{Initial: time.Second}
	r := supervisor.NewRand(7)
	for range 100 {
		if d := jb.Delay(3, r); d < 4*time.Second || d >= 5*time.Second {
			t.Fatalf("Delay(3) with jitter = %v, want [4s, 5s)", d)
		}
	}
}

// child panics on every string message and reports each start.
type child struct{ started chan<- struct{} }

func (c *child) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		c.started <- struct{}{}
	case string:
		if m == "fenced" {
			panic(fmt.Errorf("append: %w", errFenced))
		}
		panic(m)
	}
}

// parent spawns one child under the strategy given in its props.
type parent struct {
	childProps *actor.Props
	pid        chan<- *actor.PID
}

func (p *parent) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); ok {
		p.pid <- ctx.Spawn(p.childProps)
	}
}

func newSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
}

func spawnSupervised(t *testing.T, sys *actor.ActorSystem, strategy actor.SupervisorStrategy) (*actor.PID, <-chan struct{}) {
	t.Helper()
	started := make(chan struct{}, 16)
	pids := make(chan *actor.PID, 1)
	childProps := actor.PropsFromProducer(func() actor.Actor { return &child{started: started} })
	parentProps := actor.PropsFromProducer(func() actor.Actor { return &parent{childProps: childProps, pid: pids} },
		actor.WithSupervisor(strategy))
	sys.Root.Spawn(parentProps)
	pid := <-pids
	<-started
	return pid, started
}

type stopRecord struct {
	mu      sync.Mutex
	reasons []error
	done    chan struct{}
}

func (r *stopRecord) onStop(_ *actor.PID, reason error) {
	r.mu.Lock()
	r.reasons = append(r.reasons, reason)
	r.mu.Unlock()
	close(r.done)
}

func TestSessionStrategy_RestartsUntilBudgetExhausted(t *testing.T) {
	sys := newSystem()
	defer sys.Shutdown()
	rec := &stopRecord{done: make(chan struct{})}
	strategy := supervisor.NewSessionStrategy(supervisor.SessionOptions{
		Decider: supervisor.SessionDecider(errFenced),
		Budget:  supervisor.NewBudget(supervisor.BudgetOptions{MaxFailures: 2, Window: time.Hour}),
		OnStop:  rec.onStop,
	})
	pid, started := spawnSupervised(t, sys, strategy)
	for i := range 2 {
		sys.Root.Send(pid, fmt.Sprintf("boom %d", i))
		<-started // restarted
	}
	sys.Root.Send(pid, "boom 2")
	<-rec.done
	if err := sys.Root.StopFuture(pid).Wait(); err != nil {
		t.Logf("stop: %v", err)
	}
	var be *supervisor.BudgetExhaustedError
	if len(rec.reasons) != 1 || !errors.As(rec.reasons[0], &be) || be.Failures != 3 {
		t.Fatalf("OnStop reasons = %v, want one exhausted budget after 3 failures", rec.reasons)
	}
	if !errors.Is(rec.reasons[0], supervisor.ErrBudgetExhausted) {
		t.Error("the stop reason does not wrap ErrBudgetExhausted")
	}
}

func TestSessionStrategy_FencedStopsAtOnce(t *testing.T) {
	sys := newSystem()
	defer sys.Shutdown()
	rec := &stopRecord{done: make(chan struct{})}
	strategy := supervisor.NewSessionStrategy(supervisor.SessionOptions{Decider: supervisor.SessionDecider(errFenced), OnStop: rec.onStop})
	pid, started := spawnSupervised(t, sys, strategy)
	sys.Root.Send(pid, "fenced")
	<-rec.done
	if len(rec.reasons) != 1 || !errors.Is(rec.reasons[0], errFenced) {
		t.Fatalf("OnStop reasons = %v, want the fenced error", rec.reasons)
	}
	select {
	case <-started:
		t.Fatal("a fenced session was restarted")
	default:
	}
}

func TestToolStrategy_ReportsAndStops(t *testing.T) {
	sys := newSystem()
	defer sys.Shutdown()
	reported := make(chan error, 1)
	strategy := supervisor.NewToolStrategy(supervisor.ToolOptions{OnFailure: func(_ *actor.PID, reason error) { reported <- reason }})
	pid, started := spawnSupervised(t, sys, strategy)
	sys.Root.Send(pid, "tool exploded")
	err := <-reported
	var pe *supervisor.PanicError
	if !errors.As(err, &pe) || pe.Value != "tool exploded" {
		t.Fatalf("reported %v, want the panic", err)
	}
	select {
	case <-started:
		t.Fatal("a failed tool executor was restarted")
	default:
	}
}

// manualClock fires AfterFunc callbacks when the test says so.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	delays []time.Duration
	funcs  chan func()
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	c.delays = append(c.delays, d)
	c.mu.Unlock()
	c.funcs <- f
	return func() bool { return false }
}

func TestMCPStrategy_BackoffThenStop(t *testing.T) {
	sys := newSystem()
	defer sys.Shutdown()
	clock := &manualClock{now: time.Unix(0, 0), funcs: make(chan func(), 4)}
	rec := &stopRecord{done: make(chan struct{})}
	strategy := supervisor.NewMCPStrategy(supervisor.MCPOptions{
		Budget:  supervisor.NewBudget(supervisor.BudgetOptions{MaxFailures: 2, Window: time.Hour, Clock: clock}),
		Backoff: supervisor.Backoff{Initial: time.Second, Jitter: -1},
		Clock:   clock,
		OnStop:  rec.onStop,
	})
	pid, started := spawnSupervised(t, sys, strategy)
	for range 2 {
		sys.Root.Send(pid, "connection closed")
		restart := <-clock.funcs
		select {
		case <-started:
			t.Fatal("restarted before the backoff elapsed")
		default:
		}
		restart()
		<-started
	}
	sys.Root.Send(pid, "connection closed")
	<-rec.done
	want := []time.Duration{time.Second, 2 * time.Second}
	if fmt.Sprint(clock.delays) != fmt.Sprint(want) {
		t.Errorf("backoff delays = %v, want %v", clock.delays, want)
	}
	if !errors.Is(rec.reasons[0], supervisor.ErrBudgetExhausted) {
		t.Errorf("stop reason = %v, want an exhausted budget", rec.reasons[0])
	}
}
