package actors_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// journalKey is the store key of entry seq of session (memory's layout).
func journalKey(session string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte("j/"+session+"/"), seq)
}

// alterStored rewrites one byte of the first stored journal entry of
// session holding needle (the first byte of needle), bypassing every check.
// It returns that entry's seq.
func alterStored(t *testing.T, store *memory.Store, session, needle string) uint64 {
	t.Helper()
	var seq uint64
	err := store.DB().Update(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.Prefix = []byte("j/" + session + "/")
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			at := bytes.Index(v, []byte(needle))
			if at < 0 {
				continue
			}
			v[at] ^= 0x01
			seq = binary.BigEndian.Uint64(it.Item().Key()[len(o.Prefix):])
			return txn.Set(journalKey(session, seq), v)
		}
		return errors.New("not found")
	})
	if err != nil {
		t.Fatalf("alter %q in %s: %v", needle, session, err)
	}
	return seq
}

// TestRuntime_CorruptJournalRefused journals a turn with a non-idempotent
// tool call left open (the process "crashed" before its result), then
// alters one byte of the call's recorded arguments. The next runtime
// refuses to activate that session (Open and Submit return a
// *memory.CorruptError), never runs the tool with the altered arguments,
// writes nothing to that journal, and serves the other sessions.
func TestRuntime_CorruptJournalRefused(t *testing.T) {
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
	// The state a crash leaves: s1's turn stopped after ToolCallStarted.
	args := `{"amount":"100"}`
	act, tail, err := j.Activate(ctx, "s1", "crashed")
	if err != nil {
		t.Fatal(err)
	}
	tail, err = j.Append(ctx, "s1", act, tail,
		messages.UserMessage{Turn: 0, TurnID: "t0", Message: messages.UserText("pay the invoice")},
		messages.AssistantMessage{Turn: 0, Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{{ID: "c1", Name: "pay", Arguments: args}}}, FinishReason: messages.FinishToolCalls},
		messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "pay", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	altered := alterStored(t, store, "s1", `100`)

	var runs atomic.Int32
	var gotArgs atomic.Value
	pay := &funcTool{name: "pay", perm: toolsys.PermWrite, idem: true, fn: func(_ context.Context, a json.RawMessage) (toolsys.Result, error) {
		runs.Add(1)
		gotArgs.Store(string(a))
		return toolsys.Result{Content: "paid"}, nil
	}}
	reg := runAllRegistry(t)
	reg.MustRegister(pay)
	counting := &loadCounter{Journal: j, loads: map[string]int{}}
	rt, err := actors.New(actors.Config{Journal: counting,
		Provider: scripted.MustNew(textScript("done"), scripted.Options{}), Tools: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := rt.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()

	_, err = rt.Open(ctx, "s1")
	var ce *memory.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, memory.ErrCorrupt) || ce.Session != "s1" || ce.Seq != altered {
		t.Fatalf("Open(s1) = %v, want a *memory.CorruptError at s1 seq %d", err, altered)
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("the tool ran %d times (arguments %v) from a corrupt journal", n, gotArgs.Load())
	}
	if got, err := j.Tail(ctx, "s1"); err != nil || got != tail {
		t.Errorf("s1 tail = %d, %v; want %d (nothing appended to a corrupt journal)", got, err, tail)
	}

	// A live session whose journal is damaged under it: once its actor
	// restarts (here a fault; in production a crash or a passivation), it
	// reloads the journal, refuses to go on, and the caller gets the error.
	s2, err := rt.Open(ctx, "s2")
	if err != nil {
		t.Fatalf("Open(s2) beside a corrupt session: %v", err)
	}
	if res, err := s2.Submit(ctx, messages.UserText("hello")); err != nil || res.Text != "done" {
		t.Fatalf("Submit on s2 = %+v, %v", res, err)
	}
	alterStored(t, store, "s2", "hello")
	if err := s2.Fault(errors.New("injected")); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Submit(ctx, messages.UserText("again")); !errors.As(err, &ce) || ce.Session != "s2" {
		t.Fatalf("Submit on s2 after its journal was altered = %v, want a *memory.CorruptError", err)
	}

	// A corrupt journal is not retried: each activation loaded it once.
	if n := counting.count("s1"); n != 1 {
		t.Errorf("s1's journal was loaded %d times for one Open, want 1 (no restart over a corrupt journal)", n)
	}
	if n := counting.count("s2"); n != 2 {
		t.Errorf("s2's journal was loaded %d times, want 2 (its activation and the restart that found the damage)", n)
	}
	s3, err := rt.Open(ctx, "s3")
	if err != nil {
		t.Fatalf("Open(s3) beside corrupt sessions: %v", err)
	}
	if res, err := s3.Submit(ctx, messages.UserText("hi")); err != nil || res.Text != "done" {
		t.Fatalf("Submit on s3 = %+v, %v", res, err)
	}
}

// loadCounter counts the Loads of each session.
type loadCounter struct {
	memory.Journal
	mu    sync.Mutex
	loads map[string]int
}

func (c *loadCounter) Load(ctx context.Context, session string) (*memory.State, error) {
	c.mu.Lock()
	c.loads[session]++
	c.mu.Unlock()
	return c.Journal.Load(ctx, session)
}

func (c *loadCounter) count(session string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loads[session]
}
