package memory_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// heapAfterOpen opens a store as opts says and returns how much the live
// Go heap grew: what Badger allocated up front (its first memtable, its
// caches), which the collector counts as live for as long as the store is
// open.
func heapAfterOpen(t *testing.T, opts memory.Options) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := memory.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// TestOpen_SmallFootprint checks that a store with the default options
// holds no more than 12 MiB of heap once open, in memory and on disk (with
// the 16 MiB memtable it had before, Badger's arena alone took 21 MiB).
func TestOpen_SmallFootprint(t *testing.T) {
	const limit = 12 << 20
	for _, tt := range []struct {
		name string
		opts memory.Options
	}{
		{"in memory", memory.Options{InMemory: true}},
		{"on disk", memory.Options{Dir: t.TempDir()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := heapAfterOpen(t, tt.opts); got > limit {
				t.Errorf("the open store holds %.1f MiB of heap, want at most %d MiB", float64(got)/(1<<20), limit>>20)
			}
		})
	}
}

// TestOpen_MemTableTooSmall checks that a memtable too small for an append
// of MaxAppendBytes is refused by name, rather than failing later appends.
func TestOpen_MemTableTooSmall(t *testing.T) {
	_, err := memory.Open(memory.Options{InMemory: true, MemTableSize: 4 << 20})
	if err == nil || !strings.Contains(err.Error(), "Options.MemTableSize") {
		t.Fatalf("Open with a 4 MiB memtable: err = %v, want one naming Options.MemTableSize", err)
	}
}

// TestAppend_LargestFitsDefaultMemTable appends just under MaxAppendBytes
// to stores of the default size, in memory and on disk, with each
// durability: the smaller memtable still takes the largest append.
func TestAppend_LargestFitsDefaultMemTable(t *testing.T) {
	for _, disk := range []bool{false, true} {
		for _, d := range []memory.Durability{memory.DurabilitySync, memory.DurabilityBatch, memory.DurabilityNone} {
			dir := ""
			if disk {
				dir = t.TempDir()
			}
			store := openStore(t, dir)
			j := newJournal(t, store, memory.JournalOptions{Durability: d})
			fits := messages.ToolResult{CallID: "c", Content: strings.Repeat("x", memory.MaxAppendBytes-1024)}
			if _, err := j.Append(t.Context(), "s", 0, 0, fits); err != nil {
				t.Errorf("dir %q, durability %v: append just under the limit: %v", dir, d, err)
			}
			store.Close()
		}
	}
}
