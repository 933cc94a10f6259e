package memory_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/storetest"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/redact"
)

func newMemoryJournal(t testing.TB, opts memory.JournalOptions) *memory.MemoryJournal {
	t.Helper()
	j, err := memory.NewMemoryJournal(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := j.Close(); err != nil {
			t.Error(err)
		}
	})
	return j
}

func TestMemoryJournalConformance(t *testing.T) {
	storetest.RunJournalTests(t, func(t *testing.T, opts memory.JournalOptions) storetest.Harness {
		j := newMemoryJournal(t, opts)
		return storetest.Harness{
			Journal: j,
			Corrupt: func(session string, seq uint64, raw []byte) error {
				return memory.PutMemoryEntry(j, session, seq, raw)
			},
			Stored: func(session string, seq uint64) ([]byte, error) {
				return memory.MemoryEntry(j, session, seq)
			},
			// Remove is nil: entries held in memory cannot go missing.
			AlterSnapshot: func(session string, alter func([]byte) []byte) error {
				return memory.AlterMemorySnapshot(j, session, alter)
			},
			// Reopen is nil: the journal does not persist.
		}
	})
}

func TestMemoryJournal_DurabilityIsNone(t *testing.T) {
	for _, d := range durabilities {
		t.Run(d.String(), func(t *testing.T) {
			j := newMemoryJournal(t, memory.JournalOptions{Durability: d})
			if got := j.Durability(); got != memory.DurabilityNone {
				t.Errorf("Durability() = %v, want none", got)
			}
		})
	}
	_, err := memory.NewMemoryJournal(memory.JournalOptions{Durability: memory.Durability(7)})
	if err == nil || !strings.Contains(err.Error(), "JournalOptions.Durability") {
		t.Errorf("NewMemoryJournal(Durability 7) error = %v, want one naming JournalOptions.Durability", err)
	}
}

// appendUsers activates session and appends n user messages, one per
// append, and returns the tail.
func appendUsers(t testing.TB, j memory.Journal, session string, n int) uint64 {
	t.Helper()
	act, tail, err := j.Activate(t.Context(), session, "n")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if tail, err = j.Append(t.Context(), session, act, tail, messages.UserMessage{Turn: i, Message: messages.UserText(fmt.Sprint(session, " ", i))}); err != nil {
			t.Fatal(err)
		}
	}
	return tail
}

func checkHeld(t *testing.T, j *memory.MemoryJournal, sessions, entries int) {
	t.Helper()
	s, e, b := memory.MemoryHeld(j)
	if s != sessions || e != entries || (entries == 0 && b != 0) {
		t.Errorf("journal holds %d sessions, %d entries, %d bytes; want %d sessions, %d entries", s, e, b, sessions, entries)
	}
}

// TestMemoryJournal_DeleteReleases deletes sessions with entries and a
// snapshot: the journal stops holding them, and the session's memory is
// freed, while the other sessions keep theirs.
func TestMemoryJournal_DeleteReleases(t *testing.T) {
	j := newMemoryJournal(t, memory.JournalOptions{SnapshotEvery: 4})
	for _, s := range []string{"a", "b", "c"} {
		appendUsers(t, j, s, 9) // 10 entries, a snapshot at 8
	}
	if memory.MemorySnapshotSeq(j, "b") != 8 {
		t.Fatalf("snapshot of b at %d, want 8", memory.MemorySnapshotSeq(j, "b"))
	}
	checkHeld(t, j, 3, 30)
	weak := memory.MemorySessionWeak(j, "b")
	if err := j.Delete(t.Context(), "b"); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, j, 2, 20)
	runtime.GC()
	if weak.Value() != nil {
		t.Error("the deleted session's journal is still reachable after a GC")
	}
	if tail, _ := j.Tail(t.Context(), "a"); tail != 10 {
		t.Errorf("Tail(a) = %d after deleting b, want 10", tail)
	}
	for _, s := range []string{"a", "c"} {
		if err := j.Delete(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	checkHeld(t, j, 0, 0)
}

// TestMemoryJournal_RefusedWritesHoldNothing makes first writes that are
// refused: no session is left behind for them.
func TestMemoryJournal_RefusedWritesHoldNothing(t *testing.T) {
	j := newMemoryJournal(t, memory.JournalOptions{})
	ctx := t.Context()
	big := messages.ToolResult{CallID: "c", Name: "read", Content: strings.Repeat("x", memory.MaxAppendBytes)}
	for _, tc := range []struct {
		name  string
		write func(session string) error
		want  error
	}{
		{"conflict", func(s string) error { _, err := j.Append(ctx, s, 0, 5, user(0, "x")); return err }, memory.ErrConflict},
		{"fenced", func(s string) error { _, err := j.Append(ctx, s, 3, 0, user(0, "x")); return err }, memory.ErrFenced},
		{"activate conflict", func(s string) error { _, _, err := j.ActivateAppend(ctx, s, "n", 2, user(0, "x")); return err }, memory.ErrConflict},
		{"invalid event", func(s string) error {
			_, err := j.Append(ctx, s, 0, 0, messages.UserMessage{Message: messages.SystemText("x")})
			return err
		}, memory.ErrInvalidEvent},
		{"too large", func(s string) error { _, err := j.Append(ctx, s, 0, 0, big); return err }, memory.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.write("s-" + tc.name); !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
			checkHeld(t, j, 0, 0)
			for s, err := range j.Sessions(ctx) {
				t.Errorf("Sessions yielded %q, %v after a refused write", s, err)
			}
		})
	}
}

// TestMemoryJournal_Close closes a journal holding sessions: it releases
// them, and every later call fails with ErrClosed.
func TestMemoryJournal_Close(t *testing.T) {
	j, err := memory.NewMemoryJournal(memory.JournalOptions{SnapshotEvery: 3, SnapshotInBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	tail := appendUsers(t, j, "s", 7)
	appendUsers(t, j, "t", 2)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, j, 0, 0)
	ctx := t.Context()
	_, appendErr := j.Append(ctx, "s", 0, tail, user(0, "late"))
	_, _, activateErr := j.Activate(ctx, "s", "n")
	_, _, activateAppendErr := j.ActivateAppend(ctx, "u", "n", 0, user(0, "late"))
	_, tailErr := j.Tail(ctx, "s")
	_, loadErr := j.Load(ctx, "s")
	var readErr, sessionsErr error
	for _, err := range j.Read(ctx, "s", 1) {
		readErr = err
	}
	for _, err := range j.Sessions(ctx) {
		sessionsErr = err
	}
	for name, err := range map[string]error{"Append": appendErr, "Activate": activateErr, "ActivateAppend": activateAppendErr,
		"Tail": tailErr, "Load": loadErr, "Read": readErr, "Sessions": sessionsErr, "Delete": j.Delete(ctx, "s")} {
		if !errors.Is(err, memory.ErrClosed) {
			t.Errorf("%s after Close: error = %v, want ErrClosed", name, err)
		}
	}
	checkHeld(t, j, 0, 0)
	if err := j.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestMemoryJournal_SessionsDoNotWaitForEachOther holds a write to one
// session in the middle, its session's lock held: writes and reads of
// other sessions go on, and the held write completes once released.
func TestMemoryJournal_SessionsDoNotWaitForEachOther(t *testing.T) {
	j, err := memory.NewMemoryJournal(memory.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	memory.HoldMemoryWrites(j, "slow", entered, release)
	held := make(chan error, 1)
	go func() {
		_, err := j.Append(context.Background(), "slow", 0, 0, user(0, "held"))
		held <- err
	}()
	<-entered
	others := make(chan error, 1)
	go func() {
		for i := range 100 {
			id := fmt.Sprintf("other-%d", i)
			act, tail, err := j.ActivateAppend(context.Background(), id, "n", 0, user(0, "x"))
			if err == nil {
				_, err = j.Append(context.Background(), id, act, tail, user(0, "y"))
			}
			if err == nil {
				_, err = j.Load(context.Background(), id)
			}
			if err != nil {
				others <- err
				return
			}
		}
		others <- nil
	}()
	select {
	case err := <-others:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("writes to other sessions waited for the held write to one session")
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if tail, _ := j.Tail(t.Context(), "slow"); tail != 1 {
		t.Errorf("Tail(slow) = %d after the held write, want 1", tail)
	}
}

// TestMemoryJournal_TenThousandSessions journals 10,000 sessions at once,
// interleaving their appends across 100 writers, then checks each journal,
// and that Close releases them all.
func TestMemoryJournal_TenThousandSessions(t *testing.T) {
	const writers, perWriter, appends = 100, 100, 4
	j, err := memory.NewMemoryJournal(memory.JournalOptions{SnapshotEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, writers*perWriter)
	for w := range writers {
		for i := range perWriter {
			ids = append(ids, fmt.Sprintf("s-%03d-%03d", w, i))
		}
	}
	// Writer w owns ids[w*perWriter:(w+1)*perWriter], and appends to each
	// in turn, round after round.
	failed := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		mine := ids[w*perWriter : (w+1)*perWriter]
		wg.Go(func() {
			acts, tails := make([]uint64, len(mine)), make([]uint64, len(mine))
			for round := 0; round <= appends && failed[w] == nil; round++ {
				for i, id := range mine {
					if round == 0 {
						acts[i], tails[i], failed[w] = j.Activate(context.Background(), id, "n")
					} else {
						tails[i], failed[w] = j.Append(context.Background(), id, acts[i], tails[i], user(0, fmt.Sprint(id, " ", round)))
					}
					if failed[w] != nil {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(failed...); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for id, err := range j.Sessions(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, id)
	}
	if !slices.Equal(listed, ids) {
		t.Fatalf("Sessions yielded %d ids, want the %d sessions in order", len(listed), len(ids))
	}
	for _, id := range []string{ids[0], "s-042-077", ids[len(ids)-1]} {
		st, err := j.Load(t.Context(), id)
		if err != nil || st.Seq != appends+1 || len(st.History) != appends || st.History[appends-1].Text() != fmt.Sprint(id, " ", appends) {
			t.Errorf("Load(%s) = %+v, %v; want its %d appends", id, st, err, appends)
		}
	}
	_, entries, bytes := memory.MemoryHeld(j)
	t.Logf("%d sessions hold %d entries, %d bytes of entries and snapshots (%d per session)", len(ids), entries, bytes, bytes/len(ids))
	if entries != len(ids)*(appends+1) {
		t.Errorf("journal holds %d entries, want %d", entries, len(ids)*(appends+1))
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, j, 0, 0)
}

// TestMemoryJournal_MasksBeforeStoring appends events holding a configured
// secret and a key of a known shape: neither is in the stored bytes.
func TestMemoryJournal_MasksBeforeStoring(t *testing.T) {
	const secret = "configured-secret-0123456789"
	const shaped = "sk-proj-0123456789abcdefABCDEF"
	r := redact.New()
	r.Add(secret, "<secret_ref:S>")
	j := newMemoryJournal(t, memory.JournalOptions{Redactor: r})
	events := []messages.JournalEvent{
		messages.UserMessage{TurnID: "t1", Message: messages.UserText("my key is " + shaped)},
		messages.ToolCallStarted{CallID: "c2", Name: "bash", Arguments: `{"command":"echo \"` + secret + `\""}`},
		messages.TurnCompleted{TurnID: "t1", Outcome: messages.OutcomeFailed, Reason: "401: Authorization: Bearer " + shaped},
	}
	if _, _, err := j.ActivateAppend(t.Context(), "s1", "n", 0, events...); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 4; seq++ {
		raw, err := memory.MemoryEntry(j, "s1", seq)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(raw); strings.Contains(s, secret) || strings.Contains(s, shaped) {
			t.Errorf("stored entry %d holds a secret: %s", seq, s)
		}
	}
	raw, _ := memory.MemoryEntry(j, "s1", 3)
	if !strings.Contains(string(raw), "secret_ref:S") {
		t.Errorf("stored entry 3 lost the placeholder: %s", raw)
	}
}

// TestMemoryJournal_BackgroundSnapshot takes the snapshots that appends
// call for on the snapshotter's goroutine; Load then starts from them.
func TestMemoryJournal_BackgroundSnapshot(t *testing.T) {
	j := newMemoryJournal(t, memory.JournalOptions{SnapshotEvery: 5, SnapshotInBackground: true})
	taken := make(chan error, 4)
	memory.WrapMemorySnapshotTake(j, func(take func(context.Context, string) error) func(context.Context, string) error {
		return func(ctx context.Context, s string) error {
			err := take(ctx, s)
			taken <- err
			return err
		}
	})
	tail := appendUsers(t, j, "s", 5) // 6 entries: crosses 5
	if err := <-taken; err != nil {
		t.Fatal(err)
	}
	if seq := memory.MemorySnapshotSeq(j, "s"); seq < 5 || seq > tail {
		t.Fatalf("snapshot at %d, want one between 5 and %d", seq, tail)
	}
	if err := memory.PutMemoryEntry(j, "s", 2, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	st, err := j.Load(t.Context(), "s")
	if err != nil || st.Seq != tail {
		t.Errorf("Load over a corrupt entry the snapshot covers = %v, %v; want the state at %d", st, err, tail)
	}
}

// TestMemoryJournal_SnapshotNotAfterDelete deletes a session, and starts
// its id afresh, while a snapshot of its old journal is being taken: the
// snapshot is dropped, and the new journal loads as it is.
func TestMemoryJournal_SnapshotNotAfterDelete(t *testing.T) {
	j := newMemoryJournal(t, memory.JournalOptions{SnapshotEvery: 3})
	once := false
	memory.BeforeMemorySnapshotKept(j, func(session string) {
		if once {
			return
		}
		once = true
		if err := j.Delete(t.Context(), session); err != nil {
			t.Error(err)
		}
		if _, _, err := j.ActivateAppend(t.Context(), session, "n2", 0, user(0, "afresh")); err != nil {
			t.Error(err)
		}
	})
	appendUsers(t, j, "s", 2) // 3 entries: a snapshot at 3, of the old journal
	if !once {
		t.Fatal("no snapshot was taken")
	}
	if seq := memory.MemorySnapshotSeq(j, "s"); seq != 0 {
		t.Errorf("the new journal has a snapshot at %d, from the deleted one", seq)
	}
	st, err := j.Load(t.Context(), "s")
	if err != nil || st.Seq != 2 || len(st.History) != 1 || st.History[0].Text() != "afresh" {
		t.Errorf("Load of the new journal = %+v, %v; want its 2 entries", st, err)
	}
}
