package memory_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/redact"
)

// TestJournal_MasksBeforeStoring appends events holding a configured secret
// and a key of a known shape, and checks that neither is stored while the
// entries still decode, checksum included, and keep their shape.
func TestJournal_MasksBeforeStoring(t *testing.T) {
	const secret = "configured-secret-0123456789"
	const shaped = "sk-proj-0123456789abcdefABCDEF"
	r := redact.New()
	r.Add(secret, "<secret_ref:S>")
	store := openStore(t, t.TempDir())
	defer store.Close()
	j := newJournal(t, store, memory.JournalOptions{Redactor: r})
	events := []messages.JournalEvent{
		messages.UserMessage{TurnID: "t1", Message: messages.UserText("my key is " + shaped)},
		messages.ToolResult{CallID: "c1", Name: "read_file", Content: "DB_PASSWORD=" + secret + "\npassword = os.Getenv(\"P\")"},
		messages.ToolCallStarted{CallID: "c2", Name: "bash", Arguments: `{"command":"echo \"` + secret + `\""}`},
		messages.TurnCompleted{TurnID: "t1", Outcome: messages.OutcomeFailed, Reason: "401: Authorization: Bearer " + shaped},
	}
	if _, err := j.Append(t.Context(), "s1", 0, 0, events...); err != nil {
		t.Fatal(err)
	}
	var stored []string
	for e, err := range j.Read(t.Context(), "s1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		if call, ok := e.Event.(messages.ToolCallStarted); ok && call.Arguments != `{"command":"echo \"<secret_ref:S>\""}` {
			t.Errorf("arguments stored as %s", call.Arguments)
		}
		b, _ := json.Marshal(e.Event)
		stored = append(stored, fmt.Sprintf("%s %s", e.Envelope.Type, b))
	}
	all := strings.Join(stored, "\n")
	if strings.Contains(all, secret) || strings.Contains(all, shaped) {
		t.Errorf("stored entries hold a secret:\n%s", all)
	}
	for _, kept := range []string{"secret_ref:S", `password = os.Getenv(\"P\")`} {
		if !strings.Contains(all, kept) {
			t.Errorf("stored entries lost %s:\n%s", kept, all)
		}
	}
	if len(stored) != len(events) {
		t.Errorf("%d entries stored, want %d", len(stored), len(events))
	}
}

// BenchmarkJournal_Redaction measures appends of a typical tool result to
// an in-memory journal without a redactor and with one knowing 8 values,
// and reports the ratio of the same run: the cost of masking on the path
// every entry takes.
func BenchmarkJournal_Redaction(b *testing.B) {
	ev := messages.ToolResult{CallID: "call_1", Name: "read_file", Content: strings.Repeat("a line of an ordinary source file, with a key word and a token or two\n", 8)}
	r := redact.New()
	for i := range 8 {
		r.Add(fmt.Sprintf("configured-value-%d-0123456789", i), "")
	}
	ns := map[string]float64{}
	for _, tc := range []struct {
		name string
		r    *redact.Redactor
	}{{"shapes", nil}, {"known", r}} {
		b.Run(tc.name, func(b *testing.B) {
			store := openStore(b, "")
			defer store.Close()
			j := newJournal(b, store, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: -1, Redactor: tc.r})
			var tail uint64
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if tail, err = j.Append(b.Context(), "s1", 0, tail, ev); err != nil {
					b.Fatal(err)
				}
			}
			ns[tc.name] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
	}
	if ns["shapes"] > 0 {
		b.Run("known_over_shapes", func(b *testing.B) { b.ReportMetric(ns["known"]/ns["shapes"], "ratio") })
	}
}
