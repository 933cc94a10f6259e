package memory_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/storetest"
	"github.com/agcore/agcore/messages"
)

// openStore opens a store on dir, or in memory when dir is "".
func openStore(t testing.TB, dir string) *memory.Store {
	t.Helper()
	s, err := memory.Open(memory.Options{Dir: dir, InMemory: dir == ""})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newJournal(t testing.TB, s *memory.Store, opts memory.JournalOptions) *memory.BadgerJournal {
	t.Helper()
	j, err := memory.NewJournal(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

var durabilities = []memory.Durability{memory.DurabilitySync, memory.DurabilityBatch, memory.DurabilityNone}

func TestJournalConformance(t *testing.T) {
	for _, onDisk := range []bool{true, false} {
		for _, d := range durabilities {
			name := fmt.Sprintf("memory/%s", d)
			if onDisk {
				name = fmt.Sprintf("disk/%s", d)
			}
			t.Run(name, func(t *testing.T) {
				storetest.RunJournalTests(t, func(t *testing.T, opts memory.JournalOptions) storetest.Harness {
					opts.Durability = d
					dir := ""
					if onDisk {
						dir = t.TempDir()
					}
					store := openStore(t, dir)
					t.Cleanup(func() {
						if err := store.Close(); err != nil {
							t.Error(err)
						}
					})
					h := storetest.Harness{
						Journal: newJournal(t, store, opts),
						Corrupt: func(session string, seq uint64, raw []byte) error {
							return memory.PutRawEntry(store, session, seq, raw)
						},
						Stored: func(session string, seq uint64) ([]byte, error) {
							return memory.RawEntry(store, session, seq)
						},
						Remove: func(session string, seq uint64) error {
							return memory.RemoveRawEntry(store, session, seq)
						},
						AlterSnapshot: func(session string, alter func([]byte) []byte) error {
							return memory.AlterSnapshot(store, session, alter)
						},
					}
					if onDisk {
						h.Reopen = func(t *testing.T) memory.Journal {
							if err := store.Close(); err != nil {
								t.Fatal(err)
							}
							store = openStore(t, dir)
							return newJournal(t, store, opts)
						}
					}
					return h
				})
			})
		}
	}
}

func TestSessionMemoryConformance(t *testing.T) {
	for _, onDisk := range []bool{true, false} {
		t.Run(fmt.Sprintf("disk=%v", onDisk), func(t *testing.T) {
			storetest.RunSessionMemoryTests(t, func(t *testing.T, capBytes int) storetest.SessionMemory {
				dir := ""
				if onDisk {
					dir = t.TempDir()
				}
				store := openStore(t, dir)
				t.Cleanup(func() { store.Close() })
				return memory.NewSessionMemory(store, memory.SessionMemoryOptions{SnapshotValueBytes: capBytes})
			})
		})
	}
}

// TestBatchManySessionsReopen appends from 100 goroutines to 100 sessions
// in batch mode, closes the store, reopens the directory and reads every
// append back.
func TestBatchManySessionsReopen(t *testing.T) {
	const sessions, appends = 100, 20
	dir := t.TempDir()
	store := openStore(t, dir)
	j := newJournal(t, store, memory.JournalOptions{Durability: memory.DurabilityBatch, SnapshotEvery: 8})
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for s := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("session-%03d", s)
			act, tail, err := j.Activate(t.Context(), id, "node")
			if err != nil {
				errs <- err
				return
			}
			for i := range appends {
				ev := messages.UserMessage{Turn: i, Message: messages.UserText(fmt.Sprintf("%s/%d", id, i))}
				if tail, err = j.Append(t.Context(), id, act, tail, ev); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	store = openStore(t, dir)
	defer store.Close()
	j = newJournal(t, store, memory.JournalOptions{})
	n := 0
	for id, err := range j.Sessions(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		i := 0
		for e, err := range j.Read(t.Context(), id, 2) {
			if err != nil {
				t.Fatal(err)
			}
			if got, want := e.Event.(messages.UserMessage).Message.Text(), fmt.Sprintf("%s/%d", id, i); got != want {
				t.Fatalf("%s seq %d = %q, want %q", id, e.Envelope.Seq, got, want)
			}
			i++
		}
		if i != appends {
			t.Errorf("%s: read %d appends back, want %d", id, i, appends)
		}
		st, err := j.Load(t.Context(), id)
		if err != nil || len(st.History) != appends || st.Activation != 1 {
			t.Errorf("Load(%s) = %d messages, activation %d, %v", id, len(st.History), st.Activation, err)
		}
	}
	if n != sessions {
		t.Errorf("reopened store lists %d sessions, want %d", n, sessions)
	}
}

func TestJournalClosed(t *testing.T) {
	for _, d := range durabilities {
		t.Run(d.String(), func(t *testing.T) {
			store := openStore(t, "")
			j := newJournal(t, store, memory.JournalOptions{Durability: d})
			if _, err := j.Append(t.Context(), "s", 0, 0, messages.UserMessage{Message: messages.UserText("x")}); err != nil {
				t.Fatal(err)
			}
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}
			if err := store.Close(); err != nil {
				t.Errorf("second Close = %v, want nil", err)
			}
			if _, err := j.Append(t.Context(), "s", 0, 1, messages.UserMessage{Message: messages.UserText("y")}); !errors.Is(err, memory.ErrClosed) {
				t.Errorf("Append after Close: error = %v, want ErrClosed", err)
			}
			if _, err := memory.NewJournal(store, memory.JournalOptions{}); !errors.Is(err, memory.ErrClosed) {
				t.Errorf("NewJournal on a closed store: error = %v, want ErrClosed", err)
			}
		})
	}
}

func TestJournalOptions(t *testing.T) {
	store := openStore(t, "")
	defer store.Close()
	if _, err := memory.NewJournal(store, memory.JournalOptions{Durability: 7}); err == nil {
		t.Error("NewJournal accepted an unknown durability")
	}
	j := newJournal(t, store, memory.JournalOptions{})
	if j.Durability() != memory.DurabilitySync {
		t.Errorf("zero Durability = %v, want sync", j.Durability())
	}
	for d, want := range map[memory.Durability]string{memory.DurabilitySync: "sync", memory.DurabilityBatch: "batch", memory.DurabilityNone: "none", 9: "Durability(9)"} {
		if d.String() != want {
			t.Errorf("Durability(%d).String() = %q, want %q", int(d), d.String(), want)
		}
	}
}

// TestBatchCloseFlushes checks that appends acknowledged by a batch journal
// survive Close and reopen, and that appends racing Close either succeed
// durably or fail with ErrClosed.
func TestBatchCloseFlushes(t *testing.T) {
	dir := t.TempDir()
	store := openStore(t, dir)
	j := newJournal(t, store, memory.JournalOptions{Durability: memory.DurabilityBatch})
	const writers = 20
	acked := make([]int, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			id := fmt.Sprintf("w%d", w)
			var tail uint64
			for {
				next, err := j.Append(t.Context(), id, 0, tail, messages.UserMessage{Message: messages.UserText("x")})
				if errors.Is(err, memory.ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				tail = next
				acked[w] = int(tail)
			}
		})
	}
	close(start)
	// Let every writer get at least one append through before closing.
	for w := range writers {
		if _, err := j.Append(t.Context(), fmt.Sprintf("probe%d", w), 0, 0, messages.UserMessage{Message: messages.UserText("p")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	store = openStore(t, dir)
	defer store.Close()
	j = newJournal(t, store, memory.JournalOptions{})
	for w := range writers {
		tail, err := j.Tail(t.Context(), fmt.Sprintf("w%d", w))
		if err != nil {
			t.Fatal(err)
		}
		if int(tail) < acked[w] {
			t.Errorf("writer %d: %d appends acknowledged, %d after reopen", w, acked[w], tail)
		}
	}
}

func TestJournalAppendTooLarge(t *testing.T) {
	store := openStore(t, "")
	defer store.Close()
	j := newJournal(t, store, memory.JournalOptions{})
	big := messages.ToolResult{CallID: "c", Content: strings.Repeat("x", memory.MaxAppendBytes)}
	if _, err := j.Append(t.Context(), "s", 0, 0, big); !errors.Is(err, memory.ErrTooLarge) {
		t.Errorf("Append of %d bytes: error = %v, want ErrTooLarge", memory.MaxAppendBytes, err)
	}
	fits := messages.ToolResult{CallID: "c", Content: strings.Repeat("x", memory.MaxAppendBytes-1024)}
	if _, err := j.Append(t.Context(), "s", 0, 0, fits); err != nil {
		t.Errorf("Append just under the limit: %v", err)
	}
}

// TestBatchLargeAppends sends appends that cannot share one transaction to
// a batch journal: each still commits.
func TestBatchLargeAppends(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	j := newJournal(t, store, memory.JournalOptions{Durability: memory.DurabilityBatch})
	const writers, each = 6, 3
	content := strings.Repeat("y", 700<<10)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			var tail uint64
			for range each {
				var err error
				if tail, err = j.Append(t.Context(), fmt.Sprintf("w%d", w), 0, tail, messages.ToolResult{CallID: "c", Content: content}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for w := range writers {
		if tail, err := j.Tail(t.Context(), fmt.Sprintf("w%d", w)); err != nil || tail != each {
			t.Errorf("Tail(w%d) = %d, %v; want %d", w, tail, err, each)
		}
	}
}
