package memory_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// sixEntries journals six entries in session: a turn with a tool call.
func sixEntries(t *testing.T, j memory.Journal, session string) uint64 {
	t.Helper()
	call := messages.ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":"make deploy"}`}
	tail, err := j.Append(t.Context(), session, 0, 0,
		messages.UserMessage{Turn: 0, TurnID: "t0", Message: messages.UserText("deploy it")},
		messages.AssistantMessage{Turn: 0, Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call}}},
		messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "bash", Arguments: call.Arguments},
		messages.ToolResult{Turn: 0, CallID: "c1", Name: "bash", Content: "deployed"},
		messages.AssistantMessage{Turn: 0, Message: messages.AssistantText("Done.")},
		messages.TurnCompleted{Turn: 0, TurnID: "t0", Outcome: messages.OutcomeCompleted})
	if err != nil {
		t.Fatal(err)
	}
	return tail
}

func kinds(fs []memory.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Kind))
	}
	return out
}

func TestVerify(t *testing.T) {
	s := openStore(t, "")
	defer s.Close()
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: 4})

	sixEntries(t, j, "clean")
	rep, err := j.Verify(t.Context(), "clean")
	if err != nil || len(rep.Findings) != 0 || rep.Entries != 6 || rep.Tail != 6 || rep.Snapshot != 6 || rep.Damaged() {
		t.Fatalf("Verify(clean) = %+v, %v; want 6 sound entries and the snapshot at 6", rep, err)
	}

	// An altered tool call and a lost entry: both reported, in order.
	sixEntries(t, j, "bad")
	raw, err := memory.RawEntry(s, "bad", 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := memory.PutRawEntry(s, "bad", 3, bytes.Replace(raw, []byte("deploy"), []byte("deplpy"), 1)); err != nil {
		t.Fatal(err)
	}
	if err := memory.RemoveRawEntry(s, "bad", 5); err != nil {
		t.Fatal(err)
	}
	rep, err = j.Verify(t.Context(), "bad")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Damaged() || !rep.Corrupt() || len(rep.Findings) < 2 ||
		rep.Findings[0].Seq != 3 || !strings.Contains(rep.Findings[0].Problem, "checksum mismatch") ||
		rep.Findings[1].Seq != 5 || !strings.Contains(rep.Findings[1].Problem, "entry 5 is missing") {
		t.Fatalf("Verify(bad) findings = %+v; want the checksum at 3 and the gap at 5", rep.Findings)
	}

	// A damaged snapshot is reported; Load works around it.
	sixEntries(t, j, "snap")
	if err := memory.AlterSnapshot(s, "snap", func(b []byte) []byte { return bytes.Replace(b, []byte("deployed"), []byte("deplayed"), 1) }); err != nil {
		t.Fatal(err)
	}
	rep, err = j.Verify(t.Context(), "snap")
	if err != nil || rep.Damaged() || !slices.Equal(kinds(rep.Findings), []string{"snapshot"}) || rep.Snapshot != 0 {
		t.Fatalf("Verify(snap) = %+v, %v; want one snapshot finding and no damage", rep, err)
	}
	if err := j.RepairSnapshots(t.Context(), "snap"); err != nil {
		t.Fatal(err)
	}
	if rep, err = j.Verify(t.Context(), "snap"); err != nil || len(rep.Findings) != 0 || rep.Snapshot != 6 {
		t.Fatalf("Verify(snap) after RepairSnapshots = %+v, %v", rep, err)
	}

	// A snapshot with a valid checksum that disagrees with the journal it
	// covers (Load would start from it).
	sixEntries(t, j, "lying")
	st, err := j.Load(t.Context(), "lying")
	if err != nil {
		t.Fatal(err)
	}
	st.History[0] = messages.UserText("something else")
	if err := memory.PutSnapshot(s, "lying", st); err != nil {
		t.Fatal(err)
	}
	rep, err = j.Verify(t.Context(), "lying")
	if err != nil || !slices.Equal(kinds(rep.Findings), []string{"snapshot"}) || !strings.Contains(rep.Findings[0].Problem, "differs") {
		t.Fatalf("Verify(lying) = %+v, %v; want a snapshot that differs", rep, err)
	}

	// Version 1 entries are counted, not reported.
	sixEntries(t, j, "legacy")
	v1 := `{"v":1,"seq":1,"type":"user_message","at":"2025-01-02T03:04:05Z","data":{"turn":0,"turn_id":"t0","message":{"role":"user","content":"deploy it"}}}`
	if err := memory.PutRawEntry(s, "legacy", 1, []byte(v1)); err != nil {
		t.Fatal(err)
	}
	if rep, err = j.Verify(t.Context(), "legacy"); err != nil || rep.Unsealed != 1 || rep.Damaged() {
		t.Fatalf("Verify(legacy) = %+v, %v; want one unsealed entry", rep, err)
	}

	if _, err := j.Verify(t.Context(), "none"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Verify(none) = %v, want ErrNotFound", err)
	}
}

// TestQuarantine moves a damaged journal aside: the session is gone from
// the journal (a new one can start under its id), every stored byte is
// kept under the quarantine key space, and other sessions are untouched.
func TestQuarantine(t *testing.T) {
	s := openStore(t, "")
	defer s.Close()
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: 4})
	sixEntries(t, j, "bad")
	sixEntries(t, j, "good")
	raw, err := memory.RawEntry(s, "bad", 3)
	if err != nil {
		t.Fatal(err)
	}
	altered := bytes.Replace(raw, []byte("deploy"), []byte("deplpy"), 1)
	if err := memory.PutRawEntry(s, "bad", 3, altered); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	moved, err := j.Quarantine(t.Context(), "bad", at)
	if err != nil {
		t.Fatal(err)
	}
	if moved != 8 { // 6 entries, the snapshot at 4, the head
		t.Errorf("Quarantine moved %d keys, want 8", moved)
	}
	if _, err := j.Load(t.Context(), "bad"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Load(bad) after quarantine = %v, want ErrNotFound", err)
	}
	var ids []string
	for id, err := range j.Sessions(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if !slices.Equal(ids, []string{"good"}) {
		t.Errorf("Sessions after quarantine = %q, want [good]", ids)
	}
	kept, err := memory.QuarantinedEntry(s, "bad", at, 3)
	if err != nil || !bytes.Equal(kept, altered) {
		t.Errorf("quarantined entry 3 = %q, %v; want the stored bytes kept as they were", kept, err)
	}
	var qs []memory.Quarantined
	for q, err := range j.Quarantined(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	if len(qs) != 1 || qs[0].Session != "bad" || !qs[0].At.Equal(at) || qs[0].Keys != 8 {
		t.Errorf("Quarantined = %+v", qs)
	}
	if rep, err := j.Verify(t.Context(), "good"); err != nil || len(rep.Findings) != 0 {
		t.Errorf("Verify(good) = %+v, %v", rep, err)
	}
	if _, tail, err := j.Activate(t.Context(), "bad", "n"); err != nil || tail != 1 {
		t.Errorf("Activate(bad) after quarantine = tail %d, %v; want a fresh journal", tail, err)
	}
}

func TestLeftovers(t *testing.T) {
	s := openStore(t, "")
	defer s.Close()
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: 4})
	sixEntries(t, j, "half-deleted")
	sixEntries(t, j, "kept")
	if err := memory.RemoveHead(s, "half-deleted"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for r, err := range j.Leftovers(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Damaged() || len(r.Findings) != 1 || r.Findings[0].Kind != memory.FindingLeftover {
			t.Errorf("leftover report = %+v", r)
		}
		got = append(got, r.Session)
	}
	if !slices.Equal(got, []string{"half-deleted", "half-deleted"}) { // its entries and its snapshot
		t.Errorf("Leftovers = %q", got)
	}
}
