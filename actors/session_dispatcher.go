package actors

// This file holds sessionDispatcher, which runs one session's mailbox and
// the calls it starts on the runtime's workers, keeping a turn on one
// goroutine where it can.

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// step is a piece of a session's work run by a worker: a run of the
// session's mailbox, or a model or tool call. It returns the step the same
// goroutine should run next, or nil.
type step func() step

// sessionDispatcher is the actor.Dispatcher of one session's mailbox. It
// runs the mailbox on the runtime's workers, as the pool would, and saves
// the hand-offs of a turn from one goroutine to another (each one wakes a
// sleeping worker):
//
//   - a call the session starts while its mailbox runs is kept until the
//     run ends, and then runs on the same goroutine: the mailbox is idle by
//     then, so a message that arrives during the call is run by another
//     worker, as before, and the mailbox never waits on a call;
//   - when a call's report finds the mailbox idle, the worker that ran the
//     call runs the mailbox, instead of handing the run to another worker
//     and going to sleep itself.
//
// One call is kept per run of the mailbox; the others a run starts (the
// parallel tool calls of a reply) go to the pool at once. A session's
// dispatcher lives as long as its activation (sessionCarry), across the
// restarts of its actor.
type sessionDispatcher struct {
	pool *workerPool
	// runLoop runs the mailbox and what follows it, as the pool is given
	// it, and mailboxStep is runMailbox as a step: both made once.
	runLoop     func()
	mailboxStep step

	mu sync.Mutex
	// mailbox is the mailbox's run, as protoactor schedules it (always
	// the run of the same mailbox).
	mailbox func()
	// kept is the call started by the running mailbox, to run when the
	// run ends.
	kept step
	// reporting says that a call is reporting (see report): a run of the
	// mailbox asked for meanwhile is left to it (wanted), not to the pool.
	reporting bool
	wanted    bool
}

var _ actor.Dispatcher = (*sessionDispatcher)(nil)

func newSessionDispatcher(pool *workerPool) *sessionDispatcher {
	d := &sessionDispatcher{pool: pool}
	d.mailboxStep = d.runMailbox
	d.runLoop = func() { run(d.mailboxStep) }
	return d
}

// run runs s and the steps that follow it.
func run(s step) {
	for s != nil {
		s = s()
	}
}

// Schedule implements actor.Dispatcher: it runs the mailbox on a worker,
// or leaves the run to a call that is reporting.
func (d *sessionDispatcher) Schedule(fn func()) {
	d.mu.Lock()
	d.mailbox = fn
	if d.reporting {
		d.reporting, d.wanted = false, true
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	d.pool.Schedule(d.runLoop)
}

// Throughput implements actor.Dispatcher.
func (d *sessionDispatcher) Throughput() int { return d.pool.Throughput() }

// runMailbox runs the mailbox until it is idle, then returns the call its
// run started and kept, if any.
func (d *sessionDispatcher) runMailbox() step {
	d.mu.Lock()
	fn := d.mailbox
	d.mu.Unlock()
	fn()
	d.mu.Lock()
	next := d.kept
	d.kept = nil
	d.mu.Unlock()
	return next
}

// start runs call once the running mailbox run ends, on its goroutine, or
// on a worker of the pool when the run keeps a call already. It is called
// from the session's Receive only.
func (d *sessionDispatcher) start(call step) {
	d.mu.Lock()
	if d.kept == nil {
		d.kept = call
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	d.pool.Schedule(func() { run(call) })
}

// report calls send, which posts a call's report to the session, and
// returns the mailbox's run when the report scheduled it: the caller runs
// it next, on its own goroutine.
func (d *sessionDispatcher) report(send func()) step {
	d.mu.Lock()
	d.reporting = true
	d.mu.Unlock()
	send()
	d.mu.Lock()
	d.reporting = false
	wanted := d.wanted
	d.wanted = false
	d.mu.Unlock()
	if wanted {
		return d.mailboxStep
	}
	return nil
}
