package memory_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// TestBackupRestore backs up a store while a session keeps appending to it,
// restores the backup into an empty directory, and checks that every
// journal verifies and that the sessions nobody wrote to meanwhile are
// exactly as they were.
func TestBackupRestore(t *testing.T) {
	src := openStore(t, t.TempDir())
	defer src.Close()
	j := newJournal(t, src, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: 4})
	kv := memory.NewSessionMemory(src, memory.SessionMemoryOptions{})
	for i := range 20 {
		sixEntries(t, j, fmt.Sprintf("s%02d", i))
	}
	if err := kv.Set(t.Context(), "s00", "city", "Lyon"); err != nil {
		t.Fatal(err)
	}
	want := map[string]*memory.State{}
	for i := range 20 {
		id := fmt.Sprintf("s%02d", i)
		st, err := j.Load(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		want[id] = st
	}

	// A writer appends to its own session during the backup.
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		var tail uint64
		for ctx.Err() == nil {
			next, err := j.Append(ctx, "busy", 0, tail, messages.UserMessage{Message: messages.UserText("more")})
			if err != nil {
				return
			}
			tail = next
		}
	})
	var backup bytes.Buffer
	info, err := src.Backup(t.Context(), &backup)
	stop()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if info.Bytes != int64(backup.Len()) || info.Version == 0 {
		t.Errorf("BackupInfo = %+v for %d bytes", info, backup.Len())
	}

	dst := filepath.Join(t.TempDir(), "restored")
	if err := memory.Restore(t.Context(), bytes.NewReader(backup.Bytes()), int64(backup.Len()), memory.Options{Dir: dst}); err != nil {
		t.Fatal(err)
	}
	rs := openStore(t, dst)
	defer rs.Close()
	rj := newJournal(t, rs, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: 4})
	n := 0
	for id, err := range rj.Sessions(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		rep, err := rj.Verify(t.Context(), id)
		if err != nil || len(rep.Findings) != 0 {
			t.Errorf("restored %s: %+v, %v", id, rep, err)
		}
		if w := want[id]; w != nil {
			got, err := rj.Load(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("restored %s differs (-want +got):\n%s", id, diff)
			}
		}
	}
	if n != 21 && n != 20 {
		t.Errorf("restored %d sessions, want the 20 and perhaps the busy one", n)
	}
	if v, err := memory.NewSessionMemory(rs, memory.SessionMemoryOptions{}).Get(t.Context(), "s00", "city"); err != nil || v != "Lyon" {
		t.Errorf("restored session memory = %q, %v", v, err)
	}
	// The restored store takes new appends after what it holds.
	if _, _, err := rj.Activate(t.Context(), "s00", "restored"); err != nil {
		t.Fatal(err)
	}
}

func TestRestore_Refuses(t *testing.T) {
	src := openStore(t, "")
	j := newJournal(t, src, memory.JournalOptions{Durability: memory.DurabilityNone})
	sixEntries(t, j, "s1")
	var backup bytes.Buffer
	if _, err := src.Backup(t.Context(), &backup); err != nil {
		t.Fatal(err)
	}
	_ = src.Close()
	good := backup.Bytes()

	t.Run("non-empty target", func(t *testing.T) {
		dir := t.TempDir()
		keep := filepath.Join(dir, "notes.txt")
		if err := os.WriteFile(keep, []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := memory.Restore(t.Context(), bytes.NewReader(good), int64(len(good)), memory.Options{Dir: dir})
		if !errors.Is(err, memory.ErrNotEmpty) {
			t.Fatalf("Restore into a non-empty directory = %v, want ErrNotEmpty", err)
		}
		if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
			t.Errorf("the target's file = %q, %v", b, err)
		}
		if es, _ := os.ReadDir(dir); len(es) != 1 {
			t.Errorf("the target holds %d entries after the refusal, want 1", len(es))
		}
	})
	damaged := map[string][]byte{
		"flipped byte": func() []byte { b := bytes.Clone(good); b[len(b)/2] ^= 0x01; return b }(),
		"truncated":    good[:len(good)-40],
		"not a backup": []byte("PK\x03\x04 this is a zip file, not a backup of anything at all"),
	}
	for name, b := range damaged {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "target")
			err := memory.Restore(t.Context(), bytes.NewReader(b), int64(len(b)), memory.Options{Dir: dir})
			if !errors.Is(err, memory.ErrBadBackup) {
				t.Fatalf("Restore of a %s backup = %v, want ErrBadBackup", name, err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused restore left %s behind: %v", dir, err)
			}
		})
	}
}
