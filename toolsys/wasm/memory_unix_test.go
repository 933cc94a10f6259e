//go:build unix

package wasm

import "testing"

func TestMappedMemory(t *testing.T) {
	const page = 64 << 10
	mem := newAllocator().Allocate(page, 4*page)
	defer mem.Free()
	b := mem.Reallocate(page)
	if len(b) != page {
		t.Fatalf("len = %d", len(b))
	}
	b[0], b[page-1] = 1, 2
	grown := mem.Reallocate(3 * page)
	if len(grown) != 3*page || grown[0] != 1 || grown[page-1] != 2 {
		t.Fatalf("growing lost the contents: len %d, %d %d", len(grown), grown[0], grown[page-1])
	}
	for i, v := range grown[page:] {
		if v != 0 {
			t.Fatalf("grown byte %d = %d, want zero", page+i, v)
		}
	}
	grown[3*page-1] = 3
	if mem.Reallocate(5*page) != nil {
		t.Error("Reallocate past the maximum succeeded")
	}
	if same := mem.Reallocate(3 * page); same[3*page-1] != 3 {
		t.Error("a failed Reallocate changed the memory")
	}
	mem.Free()
	mem.Free() // twice is harmless

	if b := newAllocator().Allocate(0, 0).Reallocate(0); b == nil || len(b) != 0 {
		t.Errorf("a memory of no pages = %v", b)
	}
}
