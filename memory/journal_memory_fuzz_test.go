package memory_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/redact"
)

// FuzzMemoryJournal_MatchesBadger journals the same untrusted session id
// and text in a MemoryJournal and in a BadgerJournal (masking a configured
// secret in both): an activation with a user message, then a tool result
// after an expected tail and with an activation of the input's choosing.
// Both journals must accept or refuse each write alike, with the same
// error, and read back the same entries and State.
func FuzzMemoryJournal_MatchesBadger(f *testing.F) {
	f.Add("s1", "hello", uint8(2), uint8(1))
	f.Add("s1", "my key is sk-proj-0123456789abcdefABCDEF", uint8(2), uint8(1))
	f.Add("a/b", "x", uint8(0), uint8(0))
	f.Add("", "x", uint8(0), uint8(0))
	f.Add("nul\x00", "x", uint8(2), uint8(1))
	f.Add("中文", "\xff\xfe invalid UTF-8", uint8(2), uint8(1))
	f.Add("s", "conflict", uint8(7), uint8(1))
	f.Add("s", "fenced", uint8(2), uint8(9))
	f.Add("s", "secret: configured-secret-0123456789", uint8(2), uint8(0))
	r := redact.New()
	r.Add("configured-secret-0123456789", "<secret_ref:S>")
	opts := memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: 2, Clock: fixedTime, Redactor: r}
	store := openStore(f, "")
	defer store.Close()
	bj := newJournal(f, store, opts)
	mj, err := memory.NewMemoryJournal(opts)
	if err != nil {
		f.Fatal(err)
	}
	defer mj.Close()
	f.Fuzz(func(t *testing.T, session, text string, expect, act uint8) {
		ctx := t.Context()
		defer func() {
			_ = bj.Delete(ctx, session)
			_ = mj.Delete(ctx, session)
		}()
		type result struct {
			act, tail uint64
			err       string
		}
		errText := func(err error) string {
			if err == nil {
				return ""
			}
			return err.Error()
		}
		first := func(j memory.Journal) result {
			a, tail, err := j.(memory.ActivateAppender).ActivateAppend(ctx, session, "n", 0, messages.UserMessage{TurnID: "t", Message: messages.UserText(text)})
			return result{a, tail, errText(err)}
		}
		second := func(j memory.Journal) result {
			tail, err := j.Append(ctx, session, uint64(act), uint64(expect), messages.ToolResult{CallID: "c", Name: "read", Content: text})
			return result{0, tail, errText(err)}
		}
		for i, step := range []func(memory.Journal) result{first, second} {
			if b, m := step(bj), step(mj); b != m {
				t.Fatalf("write %d: badger %+v, memory %+v", i+1, b, m)
			}
		}
		if b, m := readBack(t, bj, session), readBack(t, mj, session); b != m {
			t.Fatalf("read back:\nbadger %s\nmemory %s", b, m)
		}
	})
}

func fixedTime() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }

// readBack returns what j holds of session, as JSON: its entries, its
// State, and the errors reading them.
func readBack(t *testing.T, j memory.Journal, session string) string {
	t.Helper()
	var out struct {
		Entries []memory.Entry
		ReadErr string
		State   *memory.State
		LoadErr string
	}
	for e, err := range j.Read(t.Context(), session, 1) {
		if err != nil {
			out.ReadErr = err.Error()
			break
		}
		out.Entries = append(out.Entries, e)
	}
	st, err := j.Load(t.Context(), session)
	out.State = st
	if err != nil && !errors.Is(err, memory.ErrNotFound) {
		out.LoadErr = err.Error()
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
