package memory_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// TestAppend_DiskFull makes the file system look full: appends fail with
// ErrNoSpace (ENOSPC) and change nothing, and succeed again, after the same
// tail, once space is back.
func TestAppend_DiskFull(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	defer s.Close()
	j := newJournal(t, s, memory.JournalOptions{SnapshotEvery: 2})
	act, tail, err := j.Activate(t.Context(), "s1", "n")
	if err != nil {
		t.Fatal(err)
	}
	tail, err = j.Append(t.Context(), "s1", act, tail, messages.UserMessage{Message: messages.UserText("one")})
	if err != nil {
		t.Fatal(err)
	}
	before, err := j.Load(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}

	memory.SetFreeSpace(s, memory.FreeSpaceReserve(s)-1)
	_, err = j.Append(t.Context(), "s1", act, tail, messages.UserMessage{Message: messages.UserText("two")})
	if !errors.Is(err, memory.ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append on a full disk = %v, want ErrNoSpace wrapping ENOSPC", err)
	}
	for _, want := range []string{dir, "MinFreeSpace"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, _, err := j.Activate(t.Context(), "s2", "n"); !errors.Is(err, memory.ErrNoSpace) {
		t.Errorf("Activate on a full disk = %v, want ErrNoSpace", err)
	}
	if err := memory.NewSessionMemory(s, memory.SessionMemoryOptions{}).Set(t.Context(), "s1", "k", "v"); !errors.Is(err, memory.ErrNoSpace) {
		t.Errorf("SessionMemory.Set on a full disk = %v, want ErrNoSpace", err)
	}
	if got, err := j.Tail(t.Context(), "s1"); err != nil || got != tail {
		t.Fatalf("tail after the refused append = %d, %v; want %d", got, err, tail)
	}
	after, err := j.Load(t.Context(), "s1")
	if err != nil || after.Seq != before.Seq || len(after.History) != len(before.History) {
		t.Fatalf("Load after the refused append = %+v, %v; want the state before it", after, err)
	}

	memory.SetFreeSpace(s, 1<<40)
	tail, err = j.Append(t.Context(), "s1", act, tail, messages.UserMessage{Message: messages.UserText("two")})
	if err != nil {
		t.Fatalf("Append once space is back: %v", err)
	}
	if got, _ := userTexts(t, s, "s1"); len(got) != 2 || got[1] != "two" {
		t.Errorf("journal once space is back = %q", got)
	}
}
