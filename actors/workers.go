package actors

// This file holds workerPool: long-lived goroutines that run the mailboxes
// of the runtime's actors and the work its sessions start.

import (
	"context"
	"runtime"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// workerPool runs functions on long-lived goroutines. It starts with a
// fixed set of workers and, when a function finds none idle, starts
// another that stays in the pool, up to a maximum; beyond it, a function
// runs on a goroutine of its own. A worker's stack keeps the size its
// deepest run needed, so a run on a warm worker does not grow a fresh
// stack again, and a burst of calls that block (model calls waiting for a
// reply) leaves behind the workers the next burst needs. A run never waits
// for a worker, so a busy pool is no slower than a goroutine per run, and
// one function cannot hold up another. As an actor.Dispatcher it runs
// mailboxes in place of protoactor's goroutine per mailbox run.
type workerPool struct {
	tasks      chan func() // unbuffered: a send succeeds only when a worker waits
	quit       chan struct{}
	wg         sync.WaitGroup
	throughput int
	max        int

	mu      sync.Mutex
	started int  // workers started
	stopped bool // stop was called: no more workers start
}

var _ actor.Dispatcher = (*workerPool)(nil)

// newWorkerPool starts n workers, and lets the pool grow to limit workers.
// throughput is the number of messages a mailbox run handles before it
// yields (actor.Dispatcher).
func newWorkerPool(n, limit, throughput int) *workerPool {
	p := &workerPool{tasks: make(chan func()), quit: make(chan struct{}), throughput: throughput, max: max(limit, n)}
	p.started = n
	p.wg.Add(n)
	for range n {
		go p.work(nil)
	}
	return p
}

// defaultWorkers is the number of workers each of the runtime's pools
// starts with.
func defaultWorkers() int { return 4 * runtime.GOMAXPROCS(0) }

// defaultMaxWorkers is the number of workers each of the runtime's pools
// may grow to.
func defaultMaxWorkers() int { return 64 * runtime.GOMAXPROCS(0) }

// work runs first, if any, then what the pool hands it until the pool
// stops.
func (p *workerPool) work(first func()) {
	defer p.wg.Done()
	if first != nil {
		first()
	}
	for {
		select {
		case fn := <-p.tasks:
			fn()
		case <-p.quit:
			return
		}
	}
}

// Schedule runs fn on an idle worker, on a new worker when none is idle
// and the pool may grow, or else on a goroutine of its own (as it does
// once the pool has stopped).
func (p *workerPool) Schedule(fn func()) {
	select {
	case p.tasks <- fn:
		return
	default:
	}
	p.mu.Lock()
	if p.stopped || p.started >= p.max {
		p.mu.Unlock()
		go fn()
		return
	}
	p.started++
	p.wg.Add(1)
	p.mu.Unlock()
	go p.work(fn)
}

// Throughput implements actor.Dispatcher.
func (p *workerPool) Throughput() int { return p.throughput }

// stop ends the workers once they are idle and waits for them; later
// functions each run on a goroutine of their own.
func (p *workerPool) stop() {
	p.quitWorkers()
	p.wg.Wait()
}

// stopWithin is stop that waits only until ctx ends (a worker running a
// function that never returns, such as a tool ignoring its context, is
// left to end by itself), and returns ctx's error then.
func (p *workerPool) stopWithin(ctx context.Context) error {
	p.quitWorkers()
	return waitGroup(ctx, &p.wg)
}

// quitWorkers tells the workers to end once idle.
func (p *workerPool) quitWorkers() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.stopped = true
		close(p.quit)
	}
}
