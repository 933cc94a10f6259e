package memory_test

import (
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// TestAppend_DiskFullTmpfs fills a real, small file system. Without the
// free-space check Badger's next write into its memory-mapped log faults and
// the process dies of SIGBUS; with it, appends fail with ErrNoSpace, the
// journal stays as it was, and appends work again once space is freed.
func TestAppend_DiskFullTmpfs(t *testing.T) {
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m"); err != nil {
		t.Skipf("needs a tmpfs mount (root, or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	dir := filepath.Join(mnt, "data")
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 16<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := memory.Options{Dir: dir, MemTableSize: 8 << 20, MinFreeSpace: 24 << 20}
	s, err := memory.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: -1})
	rng := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, 48<<10)
	var tail uint64
	appends := 0
	for {
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		text := base64.StdEncoding.EncodeToString(raw) // incompressible
		next, err := j.Append(t.Context(), "s1", 0, tail, messages.UserMessage{Message: messages.UserText(text)})
		if errors.Is(err, memory.ErrNoSpace) {
			break
		}
		if err != nil {
			t.Fatalf("append %d: %v", appends+1, err)
		}
		tail = next
		if appends++; appends > 2000 {
			t.Fatal("the file system never filled up")
		}
	}
	t.Logf("%d appends of 64 KB before the disk was full", appends)
	if got, err := j.Tail(t.Context(), "s1"); err != nil || got != tail {
		t.Fatalf("tail = %d, %v; want %d", got, err, tail)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if tail, err = j.Append(t.Context(), "s1", 0, tail, messages.UserMessage{Message: messages.UserText("after")}); err != nil {
		t.Fatalf("append once space was freed: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = memory.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := userTexts(t, s, "s1")
	if err != nil || len(got) != appends+1 || got[appends] != "after" {
		t.Fatalf("journal after reopening: %d messages, %v; want %d", len(got), err, appends+1)
	}
}
