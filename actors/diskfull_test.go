package actors_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// fullDisk is a journal whose writes fail with ErrNoSpace while full is
// set, as the Badger journal's do when the disk is nearly full.
type fullDisk struct {
	memory.Journal
	full    atomic.Bool
	refused atomic.Int32
}

func (d *fullDisk) Activate(ctx context.Context, session, node string) (uint64, uint64, error) {
	if d.full.Load() {
		d.refused.Add(1)
		return 0, 0, fmt.Errorf("memory: journal activate %s: %w", session, memory.ErrNoSpace)
	}
	return d.Journal.Activate(ctx, session, node)
}

func (d *fullDisk) Append(ctx context.Context, session string, act, tail uint64, evs ...messages.JournalEvent) (uint64, error) {
	if d.full.Load() {
		d.refused.Add(1)
		return 0, fmt.Errorf("memory: journal append %s after %d: %w", session, tail, memory.ErrNoSpace)
	}
	return d.Journal.Append(ctx, session, act, tail, evs...)
}

// TestRuntime_DiskFull: a turn submitted while the journal cannot be
// written fails at once with an error that says the disk is full, leaves
// the journal as it was, and the same session runs turns again once space
// is back.
func TestRuntime_DiskFull(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		t.Fatal(err)
	}
	disk := &fullDisk{Journal: j}
	rt, err := actors.New(actors.Config{Journal: disk, Provider: scripted.MustNew(textScript("done"), scripted.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := rt.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()
	sess, err := rt.Open(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Submit(ctx, messages.UserText("first")); err != nil {
		t.Fatal(err)
	}
	tail, err := j.Tail(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}

	disk.full.Store(true)
	res, err := sess.Submit(ctx, messages.UserText("while full"))
	if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, memory.ErrNoSpace) {
		t.Fatalf("Submit on a full disk = %+v, %v; want an error wrapping ENOSPC", res, err)
	}
	t.Logf("the caller sees: %v", err)
	if n := disk.refused.Load(); n != 1 {
		t.Errorf("%d journal writes were tried on the full disk, want 1 (no restart loop)", n)
	}
	if got, err := j.Tail(ctx, "s1"); err != nil || got != tail {
		t.Fatalf("tail = %d, %v; want %d", got, err, tail)
	}

	disk.full.Store(false)
	res, err = sess.Submit(ctx, messages.UserText("space is back"))
	if err != nil || res.Text != "done" {
		t.Fatalf("Submit once space is back = %+v, %v", res, err)
	}
	st, err := j.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range st.History {
		if m.Role == messages.RoleUser {
			users = append(users, m.Text())
		}
	}
	if fmt.Sprint(users) != "[first space is back]" {
		t.Errorf("user messages journaled = %q, want the first and the last", users)
	}
}
