package memory_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/memory"
)

// TestJournal_SyncAppendersShareSyncs holds the store's first sync while
// sixteen appenders of a sync journal commit: they wait together for one
// more sync, so seventeen appends cost two syncs, and each returns only
// after a sync that started after its commit.
func TestJournal_SyncAppendersShareSyncs(t *testing.T) {
	s := openStore(t, "")
	defer s.Close()
	var (
		syncs   atomic.Int64
		entered = make(chan struct{})
		gate    = make(chan struct{})
	)
	memory.SetSync(s, func() error {
		if syncs.Add(1) == 1 {
			close(entered)
			<-gate
		}
		return nil
	})
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilitySync, SnapshotEvery: -1})
	ctx := t.Context()
	const appenders = 16
	errs := make(chan error, appenders+1)
	go func() {
		_, err := j.Append(ctx, "first", 0, 0, user(0, "first"))
		errs <- err
	}()
	<-entered // the first sync runs, and is held
	var wg sync.WaitGroup
	for i := range appenders {
		wg.Go(func() {
			_, err := j.Append(ctx, fmt.Sprintf("s-%d", i), 0, 0, user(0, "hi"))
			errs <- err
		})
	}
	// Until every appender has committed and waits (or, were syncs not
	// shared, has run a sync of its own).
	for memory.SyncWaiters(s) < appenders && syncs.Load() == 1 {
		runtime.Gosched()
	}
	close(gate)
	wg.Wait()
	for range appenders + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := syncs.Load(); n != 2 {
		t.Errorf("%d appends of a sync journal ran %d syncs, want 2 (the held one, then one for all who waited)", appenders+1, n)
	}
}

// TestJournal_FailedSyncForgetsTheHead fails the sync of an append: the
// append reports it (its entry is committed, its durability unknown), and
// the next append of the session compares against the stored head, read
// again.
func TestJournal_FailedSyncForgetsTheHead(t *testing.T) {
	s := openStore(t, "")
	defer s.Close()
	errDisk := errors.New("disk gone")
	var fail atomic.Bool
	memory.SetSync(s, func() error {
		if fail.Load() {
			return errDisk
		}
		return nil
	})
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilitySync, SnapshotEvery: -1})
	ctx := t.Context()
	act, tail, err := j.Activate(ctx, "s", "n")
	if err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if _, err := j.Append(ctx, "s", act, tail, user(0, "unsure")); !errors.Is(err, errDisk) {
		t.Fatalf("append whose sync failed = %v, want the sync's error", err)
	}
	fail.Store(false)
	reads := memory.HeadReads(s)
	if _, err := j.Append(ctx, "s", act, tail, user(0, "again")); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("append after the committed one = %v, want ErrConflict", err)
	}
	if got := memory.HeadReads(s) - reads; got != 1 {
		t.Errorf("the head was read %d times after the failed sync, want once", got)
	}
	if got, err := j.Append(ctx, "s", act, tail+1, user(0, "next")); err != nil || got != tail+2 {
		t.Errorf("append after the stored tail = %d, %v; want %d", got, err, tail+2)
	}
}

// TestJournal_PanickingSyncFailsTheAppend makes the store's sync panic: the
// append reports an error, and the syncs after it run (a panic does not
// leave the next appenders waiting for a sync that never ends).
func TestJournal_PanickingSyncFailsTheAppend(t *testing.T) {
	s := openStore(t, "")
	defer s.Close()
	var calls atomic.Int64
	memory.SetSync(s, func() error {
		if calls.Add(1) == 1 {
			panic("msync: bad address")
		}
		return nil
	})
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilitySync, SnapshotEvery: -1})
	ctx := t.Context()
	if _, err := j.Append(ctx, "s", 0, 0, user(0, "first")); err == nil {
		t.Fatal("append whose sync panicked returned no error")
	}
	if got, err := j.Append(ctx, "s", 0, 1, user(0, "second")); err != nil || got != 2 {
		t.Errorf("next append = %d, %v; want 2", got, err)
	}
}
