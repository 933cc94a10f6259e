package memory

import (
	"fmt"
	"sync"
	"syscall"
	"time"
)

// ErrNoSpace is returned by a write refused because the file system of the
// data directory is nearly full (see Options.MinFreeSpace). It wraps
// syscall.ENOSPC.
var ErrNoSpace = fmt.Errorf("memory: not enough free disk space: %w", syscall.ENOSPC)

// DefaultMinFreeSpace is Options.MinFreeSpace when it is zero and
// MemTableSize is at most 16 MiB.
const DefaultMinFreeSpace = 64 << 20

// FreeSpace returns the bytes available to this process on the file system
// that holds dir.
func FreeSpace(dir string) (int64, error) { return freeSpace(dir) }

// spaceProbeEvery bounds how stale the free-space figure a write is checked
// against may be.
const spaceProbeEvery = 50 * time.Millisecond

// spaceGuard refuses writes that would leave less than reserve bytes free.
//
// Badger writes through memory maps of files it sizes ahead of the data:
// when the file system runs out of blocks, the write faults and the process
// dies of SIGBUS instead of getting an error. Refusing writes while a margin
// is left keeps the store consistent and the process alive; Badger's
// flushes and compactions, which cannot be refused, write into that margin.
type spaceGuard struct {
	dir     string
	reserve int64
	probe   func(dir string) (free int64, err error)

	mu     sync.Mutex
	free   int64 // bytes free at the last probe, less what was written since
	probed time.Time
}

// check reserves n bytes for a write, or fails with ErrNoSpace. A nil guard
// accepts everything.
func (g *spaceGuard) check(n int) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if time.Since(g.probed) > spaceProbeEvery || g.free-int64(n) < g.reserve {
		free, err := g.probe(g.dir)
		if err != nil {
			return fmt.Errorf("memory: free space of %s: %w", g.dir, err)
		}
		g.free, g.probed = free, time.Now()
	}
	if g.free-int64(n) < g.reserve {
		return fmt.Errorf("%w: %s has %d MiB free, less than the %d MiB kept for the store's own writes (Options.MinFreeSpace)",
			ErrNoSpace, g.dir, g.free>>20, g.reserve>>20)
	}
	g.free -= int64(n)
	return nil
}
