package actors

// This file holds workerPool: long-lived goroutines that run the mailboxes
// of the runtime's actors and the work its sessions start.

import (
	"runtime"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// workerPool runs functions on a fixed set of long-lived goroutines, and
// on a goroutine of their own when every worker is busy. A worker's stack
// keeps the size its deepest run needed, so a run on a warm worker does
// not grow a fresh stack again; a run never waits for a worker, so a busy
// pool is no slower than a goroutine per run, and one function cannot hold
// up another. As an actor.Dispatcher it runs mailboxes in place of
// protoactor's goroutine per mailbox run.
type workerPool struct {
	tasks      chan func() // unbuffered: a send succeeds only when a worker waits
	quit       chan struct{}
	wg         sync.WaitGroup
	throughput int
	stopOnce   sync.Once
}

var _ actor.Dispatcher = (*workerPool)(nil)

// newWorkerPool starts n workers. throughput is the number of messages a
// mailbox run handles before it yields (actor.Dispatcher).
func newWorkerPool(n, throughput int) *workerPool {
	p := &workerPool{tasks: make(chan func()), quit: make(chan struct{}), throughput: throughput}
	p.wg.Add(n)
	for range n {
		go p.work()
	}
	return p
}

// defaultWorkers is the number of workers of each of the runtime's pools.
func defaultWorkers() int { return 4 * runtime.GOMAXPROCS(0) }

func (p *workerPool) work() {
	defer p.wg.Done()
	for {
		select {
		case fn := <-p.tasks:
			fn()
		case <-p.quit:
			return
		}
	}
}

// Schedule runs fn on an idle worker, or on a goroutine of its own when
// none is idle (or the pool has stopped).
func (p *workerPool) Schedule(fn func()) {
	select {
	case p.tasks <- fn:
	default:
		go fn()
	}
}

// Throughput implements actor.Dispatcher.
func (p *workerPool) Throughput() int { return p.throughput }

// stop ends the workers once they are idle and waits for them; later
// functions each run on a goroutine of their own.
func (p *workerPool) stop() {
	p.stopOnce.Do(func() { close(p.quit) })
	p.wg.Wait()
}
