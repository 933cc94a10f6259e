//go:build !unix

package wasm

import "github.com/tetratelabs/wazero/experimental"

// newAllocator returns nil where anonymous mappings are not available:
// wazero then keeps linear memories on Go's heap.
func newAllocator() experimental.MemoryAllocator { return nil }
