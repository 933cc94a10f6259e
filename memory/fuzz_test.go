package memory_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// FuzzJournalEntry plants arbitrary bytes as the middle entry of a journal:
// reading never panics, the entry before stays readable, and the planted
// entry either decodes (a version 1 envelope, or one that matches its
// checksum) or is reported as a CorruptError (or, for an unknown version or
// type, an EntryError) naming its seq; Load agrees with Read.
func FuzzJournalEntry(f *testing.F) {
	f.Add([]byte(`{"v":1,"seq":2,"type":"user_message","at":"2025-01-02T03:04:05Z","data":{"turn":0,"message":{"role":"user","content":"hi"}}}`))
	f.Add([]byte(`{"v":2,"seq":2,"type":"user_message","data":{}}`))
	f.Add([]byte(`{"v":1,"seq":2,"type":"compacted","data":{"through":99,"messages":[{"role":"tool","content":"x"}]}}`))
	f.Add([]byte("\xff\x00"))
	f.Add([]byte(`{"v":2,"seq":2,"type":"user_message","at":"2025-01-02T03:04:05Z","data":{"turn":0,"message":{"role":"user","content":"hi"}},"crc":"00000000"}`))
	store := openStore(f, "")
	defer store.Close()
	j := newJournal(f, store, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: -1})
	n := 0
	f.Fuzz(func(t *testing.T, raw []byte) {
		n++
		session := fmt.Sprintf("fuzz-%d", n)
		ev := messages.UserMessage{Message: messages.UserText("x")}
		if _, err := j.Append(t.Context(), session, 0, 0, ev, ev, ev); err != nil {
			t.Fatal(err)
		}
		if err := memory.PutRawEntry(store, session, 2, raw); err != nil {
			t.Fatal(err)
		}
		var (
			got     []uint64
			readErr error
		)
		for e, err := range j.Read(t.Context(), session, 1) {
			if err != nil {
				readErr = err
				var (
					ce *memory.CorruptError
					ee *memory.EntryError
				)
				switch {
				case errors.As(err, &ce):
					if ce.Seq != 2 || ce.Session != session || !errors.Is(err, memory.ErrCorrupt) {
						t.Fatalf("error = %v, want a CorruptError at seq 2", err)
					}
				case errors.As(err, &ee):
					if ee.Seq != 2 || ee.Session != session || errors.Is(err, messages.ErrCorrupt) {
						t.Fatalf("error = %v, want an EntryError at seq 2 for a newer format", err)
					}
				default:
					t.Fatalf("error = %v, want a CorruptError or an EntryError at seq 2", err)
				}
				break
			}
			got = append(got, e.Envelope.Seq)
		}
		if len(got) == 0 || got[0] != 1 {
			t.Fatalf("entries read = %v, want entry 1 first", got)
		}
		st, err := j.Load(t.Context(), session)
		if (err == nil) != (readErr == nil) || errors.Is(err, memory.ErrCorrupt) != errors.Is(readErr, memory.ErrCorrupt) {
			t.Fatalf("Load error %v, Read error %v", err, readErr)
		}
		if err == nil {
			if msgs := st.Messages(memory.ViewOptions{}); len(msgs) > 0 {
				st.Messages(memory.ViewOptions{Window: 2})
			}
		}
	})
}

// FuzzRepair builds a message sequence from the input (assistant messages
// with unique call ids, tool results for real or unknown ids, user and
// system messages in any order) and checks that Repair always returns a
// sequence providers accept.
func FuzzRepair(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{3, 3, 1, 2, 2, 0})
	f.Add([]byte{4, 1, 5, 2, 0, 3, 3})
	f.Fuzz(func(t *testing.T, script []byte) {
		var msgs []messages.Message
		calls := 0
		for i, b := range script {
			switch b % 6 {
			case 0:
				msgs = append(msgs, messages.UserText("u"))
			case 1:
				m := messages.Message{Role: messages.RoleAssistant}
				for k := range int(b/6)%3 + 1 {
					calls++
					m.ToolCalls = append(m.ToolCalls, messages.ToolCall{ID: fmt.Sprintf("c%d", calls), Name: fmt.Sprint("t", k)})
				}
				msgs = append(msgs, m)
			case 2:
				msgs = append(msgs, messages.ToolResultMessage(fmt.Sprintf("c%d", calls-int(b/6)%3), "r"))
			case 3:
				msgs = append(msgs, messages.ToolResultMessage(fmt.Sprintf("x%d", i), "r"))
			case 4:
				msgs = append(msgs, messages.SystemText("s"))
			case 5:
				msgs = append(msgs, messages.AssistantText("a"))
			}
		}
		out := memory.Repair(msgs)
		if len(out) == 0 {
			return
		}
		if err := messages.Validate(out); err != nil {
			t.Fatalf("Repair(%v) does not validate: %v", script, err)
		}
	})
}
