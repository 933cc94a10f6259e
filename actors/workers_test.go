package actors

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// goid returns the id of the calling goroutine, from its stack trace.
func goid() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(buf[:bytes.IndexByte(buf, ' ')]), 10, 64)
	return id
}

// runBatch schedules n functions on p that all wait until every one of them
// has started, and returns the goroutines they ran on.
func runBatch(t *testing.T, p *workerPool, n int) map[uint64]bool {
	t.Helper()
	var (
		mu      sync.Mutex
		ids     = make(map[uint64]bool)
		started sync.WaitGroup
		done    sync.WaitGroup
	)
	release := make(chan struct{})
	started.Add(n)
	done.Add(n)
	for range n {
		p.Schedule(func() {
			defer done.Done()
			mu.Lock()
			ids[goid()] = true
			mu.Unlock()
			started.Done()
			<-release
		})
	}
	started.Wait()
	close(release)
	done.Wait()
	return ids
}

// liveGoroutines returns the ids of every goroutine of the process.
func liveGoroutines() map[uint64]bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	ids := make(map[uint64]bool)
	for _, line := range bytes.Split(buf, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("goroutine ")); ok {
			if id, err := strconv.ParseUint(string(rest[:bytes.IndexByte(rest, ' ')]), 10, 64); err == nil {
				ids[id] = true
			}
		}
	}
	return ids
}

// TestWorkerPool_KeepsTheWorkersABurstNeeded runs two bursts of functions
// that block, more than the pool's initial workers: every goroutine they
// ran on is still there afterwards, a worker of the pool (whose stack has
// grown to what such functions need) rather than a goroutine that ran one
// function and exited.
func TestWorkerPool_KeepsTheWorkersABurstNeeded(t *testing.T) {
	p := newWorkerPool(2, 16, 0)
	defer p.stop()
	used := runBatch(t, p, 6)
	for id := range runBatch(t, p, 6) {
		used[id] = true
	}
	live := liveGoroutines()
	for id := range used {
		if !live[id] {
			t.Errorf("goroutine %d ran a function and exited: the pool did not keep it as a worker", id)
		}
	}
	if len(used) > 16 {
		t.Errorf("the bursts ran on %d goroutines, more than the pool's maximum of 16", len(used))
	}
}

// TestWorkerPool_BoundedAndStopped checks that the pool keeps at most its
// maximum number of workers (a larger burst runs the rest on goroutines of
// their own), and that after stop every function still runs.
func TestWorkerPool_BoundedAndStopped(t *testing.T) {
	p := newWorkerPool(1, 3, 0)
	if ids := runBatch(t, p, 8); len(ids) != 8 {
		t.Fatalf("a burst of 8 ran on %d goroutines, want 8", len(ids))
	}
	p.mu.Lock()
	started := p.started
	p.mu.Unlock()
	if started != 3 {
		t.Errorf("the pool started %d workers, want its maximum of 3", started)
	}
	p.stop()
	if ids := runBatch(t, p, 4); len(ids) != 4 {
		t.Fatalf("after stop, a burst of 4 ran on %d goroutines, want 4", len(ids))
	}
}
