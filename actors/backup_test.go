package actors_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// TestRuntime_BackupWhileRunning backs up a runtime's data directory while
// its sessions run turns, restores the backup elsewhere, and resumes every
// session from it: each journal verifies, each session answers a new turn
// after the turns the backup holds.
func TestRuntime_BackupWhileRunning(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	newRT := func(dir string) *actors.Runtime {
		rt, err := actors.New(actors.Config{DataDir: dir, Durability: memory.DurabilityNone,
			Provider: scripted.MustNew(textScript("done"), scripted.Options{}), IdleTimeout: -1})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	src := newRT(filepath.Join(t.TempDir(), "live"))
	const sessions = 4
	var wg sync.WaitGroup
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		sess, err := src.Open(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Submit(ctx, messages.UserText("first")); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for k := range 20 {
				if _, err := sess.Submit(ctx, messages.UserText(fmt.Sprint("turn ", k))); err != nil {
					t.Errorf("%s turn %d: %v", id, k, err)
					return
				}
			}
		})
	}
	var backup bytes.Buffer
	info, err := src.Backup(ctx, &backup)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("backup of %d bytes taken while %d sessions ran turns", info.Bytes, sessions)

	dir := filepath.Join(t.TempDir(), "restored")
	if err := memory.Restore(ctx, bytes.NewReader(backup.Bytes()), int64(backup.Len()), memory.Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	rt := newRT(dir)
	defer rt.Shutdown(ctx)
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		st, err := rt.Journal().Load(ctx, id)
		if err != nil {
			t.Fatalf("restored %s: %v", id, err)
		}
		sess, err := rt.Open(ctx, id)
		if err != nil {
			t.Fatalf("resume %s: %v", id, err)
		}
		res, err := sess.Submit(ctx, messages.UserText("after restore"))
		if err != nil || res.Text != "done" || res.Turn < st.Turn {
			t.Fatalf("%s after restore = %+v, %v; want a turn after turn %d", id, res, err, st.Turn-1)
		}
		rep, err := rt.Journal().(*memory.BadgerJournal).Verify(ctx, id)
		if err != nil || len(rep.Findings) != 0 {
			t.Errorf("%s after resuming: %+v, %v", id, rep, err)
		}
	}
}
