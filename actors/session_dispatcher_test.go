package actors

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// TestSessionDispatcher_CallRunsAfterTheRunOnItsGoroutine: a call started
// while the mailbox runs waits for the run to end, then runs on the same
// goroutine; a second call of the same run goes to the pool at once.
func TestSessionDispatcher_CallRunsAfterTheRunOnItsGoroutine(t *testing.T) {
	pool := newWorkerPool(2, 4, 10)
	defer pool.stop()
	d := newSessionDispatcher(pool)

	var running atomic.Bool
	type ran struct {
		id           uint64
		whileRunning bool
	}
	first, second := make(chan ran, 1), make(chan ran, 1)
	mailboxRan := make(chan uint64, 1)
	d.Schedule(func() {
		running.Store(true)
		defer running.Store(false)
		mailboxRan <- goid()
		d.start(func() step {
			first <- ran{goid(), running.Load()}
			return nil
		})
		d.start(func() step {
			second <- ran{goid(), false}
			return nil
		})
		// The second call does not wait for the run to end.
		<-second
	})
	mailbox := <-mailboxRan
	got := <-first
	if got.whileRunning {
		t.Error("the kept call ran while the mailbox was running")
	}
	if got.id != mailbox {
		t.Errorf("the kept call ran on goroutine %d, want the mailbox's goroutine %d", got.id, mailbox)
	}
}

// TestSessionDispatcher_ReportRunsTheMailbox: a report that finds the
// mailbox idle leaves its run to the reporting goroutine; without a
// report, a run goes to the pool.
func TestSessionDispatcher_ReportRunsTheMailbox(t *testing.T) {
	pool := newWorkerPool(1, 1, 10)
	defer pool.stop()
	d := newSessionDispatcher(pool)

	ranOn := make(chan uint64, 1)
	mailbox := func() { ranOn <- goid() }
	next := d.report(func() { d.Schedule(mailbox) })
	if next == nil {
		t.Fatal("report returned no step, want the mailbox's run")
	}
	run(next)
	if id := <-ranOn; id != goid() {
		t.Errorf("the mailbox ran on goroutine %d, want the reporter's %d", id, goid())
	}

	// A report whose send schedules nothing leaves nothing to run.
	if next := d.report(func() {}); next != nil {
		t.Error("report with no run asked for returned a step")
	}
	// Without a report, the pool runs the mailbox.
	d.Schedule(mailbox)
	if id := <-ranOn; id == goid() {
		t.Error("a run scheduled outside a report ran on the caller's goroutine")
	}
}

// counter is an actor that counts the ints it receives and closes done at
// want.
type counter struct {
	n, want int
	done    chan struct{}
	inside  atomic.Int32
	overlap atomic.Bool
}

func (c *counter) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(int); !ok {
		return
	}
	if c.inside.Add(1) != 1 {
		c.overlap.Store(true)
	}
	defer c.inside.Add(-1)
	if c.n++; c.n == c.want {
		close(c.done)
	}
}

// TestSessionDispatcher_NoRunIsLost sends to one actor from reporting
// goroutines, each running the steps its report returns, and from plain
// senders at once: every message is received, one at a time.
func TestSessionDispatcher_NoRunIsLost(t *testing.T) {
	const reporters, senders, each = 8, 4, 500
	pool := newWorkerPool(2, 8, 300)
	defer pool.stop()
	d := newSessionDispatcher(pool)
	system := actor.NewActorSystem()
	c := &counter{want: (reporters + senders) * each, done: make(chan struct{})}
	pid := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return c }, actor.WithDispatcher(d)))
	defer system.Root.Stop(pid)

	var wg sync.WaitGroup
	for range reporters {
		wg.Go(func() {
			for i := range each {
				run(d.report(func() { system.Root.Send(pid, i) }))
			}
		})
	}
	for range senders {
		wg.Go(func() {
			for i := range each {
				system.Root.Send(pid, i)
			}
		})
	}
	wg.Wait()
	<-c.done
	if c.overlap.Load() {
		t.Error("two runs of the mailbox overlapped")
	}
}
