//go:build unix

package wasm

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// memoryAllocator backs each module's linear memory with an anonymous
// mapping of its whole maximum size, reserved without access and made
// readable and writable as the module grows it. Growing then neither
// copies the memory nor zeroes it (the kernel hands out zeroed pages when
// they are first touched), and the memory never weighs on Go's heap.
type memoryAllocator struct{}

// Allocate implements experimental.MemoryAllocator.
func (memoryAllocator) Allocate(_, max uint64) experimental.LinearMemory {
	return &mappedMemory{max: max}
}

// mappedMemory is one module's linear memory.
type mappedMemory struct {
	max  uint64
	buf  []byte // the whole reservation
	size uint64 // the accessible part
}

// Reallocate makes the first size bytes accessible; nil when that is more
// than the maximum or the mapping fails (the module's memory.grow fails).
func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if m.buf == nil {
		if m.max == 0 {
			return []byte{}
		}
		b, err := syscall.Mmap(-1, 0, int(m.max), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			return nil
		}
		m.buf = b
	}
	if size > m.size {
		if err := syscall.Mprotect(m.buf[m.size:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.size = size
	}
	return m.buf[:size:size]
}

// Free releases the mapping.
func (m *mappedMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf, m.size = nil, 0
	}
}

// newAllocator returns the allocator of linear memories.
func newAllocator() experimental.MemoryAllocator { return memoryAllocator{} }
