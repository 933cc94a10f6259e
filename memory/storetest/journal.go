// Package storetest is the conformance suite of the memory package's
// backends: RunJournalTests checks a memory.Journal, RunSessionMemoryTests a
// session key-value memory. A backend's own tests call them with a
// constructor, once per configuration (on disk, in memory, each durability
// mode).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// Harness is one journal under test, with the hooks the suite needs.
type Harness struct {
	// Journal is the journal under test, empty.
	Journal memory.Journal
	// Corrupt overwrites the stored bytes of entry seq of session (which
	// exists) with raw, bypassing every check.
	Corrupt func(session string, seq uint64, raw []byte) error
	// Stored returns the stored bytes of entry seq of session.
	Stored func(session string, seq uint64) ([]byte, error)
	// Remove deletes the stored entry seq of session, bypassing every
	// check. Nil for a backend that cannot lose an entry on its own.
	Remove func(session string, seq uint64) error
	// AlterSnapshot rewrites the stored bytes of the session's latest
	// snapshot with alter, bypassing every check. Nil for a backend without
	// snapshots.
	AlterSnapshot func(session string, alter func([]byte) []byte) error
	// Reopen closes the backend and opens it again on the same data,
	// returning the new journal. Nil for a backend that does not persist.
	Reopen func(t *testing.T) memory.Journal
}

// JournalSetup builds a fresh harness whose journal uses opts (the suite sets
// SnapshotEvery and Clock; the backend keeps its own Durability). It
// releases the backend with t.Cleanup.
type JournalSetup func(t *testing.T, opts memory.JournalOptions) Harness

// epoch is the suite's clock: every envelope is stamped with it.
var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func fixedClock() time.Time { return epoch }

// RunJournalTests runs the journal conformance suite.
func RunJournalTests(t *testing.T, setup JournalSetup) {
	newJ := func(t *testing.T, snapshotEvery int) Harness {
		t.Helper()
		return setup(t, memory.JournalOptions{SnapshotEvery: snapshotEvery, Clock: fixedClock})
	}
	tests := []struct {
		name string
		run  func(t *testing.T, h Harness)
		snap int
	}{
		{"AppendRead", testAppendRead, -1},
		{"Conflict", testConflict, -1},
		{"ActivateFence", testActivateFence, -1},
		{"Sessions", testSessions, -1},
		{"InvalidSession", testInvalidSession, -1},
		{"InvalidEvents", testInvalidEvents, -1},
		{"Load", testLoad, -1},
		{"SnapshotUsedByLoad", testSnapshot, 5},
		{"NoSnapshots", testNoSnapshots, -1},
		{"CorruptEntry", testCorruptEntry, -1},
		{"ChecksumMismatch", testChecksumMismatch, -1},
		{"MissingEntry", testMissingEntry, -1},
		{"Version1Entries", testVersion1Entries, -1},
		{"DamagedSnapshot", testDamagedSnapshot, 5},
		{"UnknownVersion", testUnknownVersion, -1},
		{"ReadBreak", testReadBreak, -1},
		{"Delete", testDelete, 3},
		{"ConcurrentSameSession", testConcurrentSameSession, 7},
		{"ConcurrentSessions", testConcurrentSessions, -1},
		{"CancelledContext", testCancelled, -1},
		{"Reopen", testReopen, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newJ(t, tc.snap))
		})
	}
}

func user(turn int, text string) messages.UserMessage {
	return messages.UserMessage{Turn: turn, TurnID: fmt.Sprintf("t%d", turn), Message: messages.UserText(text)}
}

func assistant(turn int, text string, calls ...messages.ToolCall) messages.AssistantMessage {
	m := messages.AssistantText(text)
	m.ToolCalls = calls
	return messages.AssistantMessage{Turn: turn, Message: m, Usage: messages.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}, Cost: 0.5}
}

// readAll collects the entries of session from seq from, and the error that
// ended the read.
func readAll(t *testing.T, j memory.Journal, session string, from uint64) ([]memory.Entry, error) {
	t.Helper()
	var out []memory.Entry
	for e, err := range j.Read(t.Context(), session, from) {
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

func seqs(es []memory.Entry) []uint64 {
	out := make([]uint64, len(es))
	for i, e := range es {
		out[i] = e.Envelope.Seq
	}
	return out
}

func mustAppend(t *testing.T, j memory.Journal, session string, act, tail uint64, evs ...messages.JournalEvent) uint64 {
	t.Helper()
	got, err := j.Append(t.Context(), session, act, tail, evs...)
	if err != nil {
		t.Fatalf("Append(%s, act %d, tail %d): %v", session, act, tail, err)
	}
	if want := tail + uint64(len(evs)); got != want {
		t.Fatalf("Append(%s) = %d, want %d", session, got, want)
	}
	return got
}

func testAppendRead(t *testing.T, h Harness) {
	j := h.Journal
	evs := []messages.JournalEvent{user(0, "hello"), assistant(0, "hi"), messages.TurnCompleted{Turn: 0, TurnID: "t0", Outcome: messages.OutcomeCompleted}}
	mustAppend(t, j, "s1", 0, 0, evs[0])
	mustAppend(t, j, "s1", 0, 1, evs[1:]...)

	for _, tc := range []struct {
		from uint64
		want []uint64
	}{{0, []uint64{1, 2, 3}}, {1, []uint64{1, 2, 3}}, {2, []uint64{2, 3}}, {3, []uint64{3}}, {4, []uint64{}}} {
		got, err := readAll(t, j, "s1", tc.from)
		if err != nil {
			t.Fatalf("Read(from %d): %v", tc.from, err)
		}
		if diff := cmp.Diff(tc.want, seqs(got)); diff != "" {
			t.Errorf("Read(from %d) seqs (-want +got):\n%s", tc.from, diff)
		}
	}
	got, _ := readAll(t, j, "s1", 1)
	for i, e := range got {
		if diff := cmp.Diff(evs[i], e.Event); diff != "" {
			t.Errorf("entry %d event (-want +got):\n%s", i+1, diff)
		}
		if e.Envelope.V != messages.EnvelopeVersion || e.Envelope.Type != evs[i].JournalType() || !e.Envelope.At.Equal(epoch) {
			t.Errorf("entry %d envelope = v%d %q at %v, want v%d %q at %v", i+1, e.Envelope.V, e.Envelope.Type, e.Envelope.At, messages.EnvelopeVersion, evs[i].JournalType(), epoch)
		}
	}
	if tail, err := j.Tail(t.Context(), "s1"); err != nil || tail != 3 {
		t.Errorf("Tail = %d, %v; want 3", tail, err)
	}
	if tail, err := j.Tail(t.Context(), "unknown"); err != nil || tail != 0 {
		t.Errorf("Tail(unknown) = %d, %v; want 0, nil", tail, err)
	}
	if got, err := readAll(t, j, "unknown", 1); err != nil || len(got) != 0 {
		t.Errorf("Read(unknown) = %d entries, %v; want none", len(got), err)
	}
}

func testConflict(t *testing.T, h Harness) {
	j := h.Journal
	mustAppend(t, j, "s", 0, 0, user(0, "a"))
	for _, expect := range []uint64{0, 2, 7} {
		_, err := j.Append(t.Context(), "s", 0, expect, user(0, "b"))
		if !errors.Is(err, memory.ErrConflict) {
			t.Errorf("Append(expect %d) error = %v, want ErrConflict", expect, err)
		}
	}
	if tail, _ := j.Tail(t.Context(), "s"); tail != 1 {
		t.Errorf("Tail after conflicts = %d, want 1", tail)
	}
	mustAppend(t, j, "s", 0, 1, user(0, "b"))
}

func testActivateFence(t *testing.T, h Harness) {
	j := h.Journal
	ctx := t.Context()
	a1, tail, err := j.Activate(ctx, "s", "node-a")
	if err != nil || a1 != 1 || tail != 1 {
		t.Fatalf("Activate #1 = %d, %d, %v; want 1, 1, nil", a1, tail, err)
	}
	tail = mustAppend(t, j, "s", a1, tail, user(0, "x"))
	a2, tail2, err := j.Activate(ctx, "s", "node-b")
	if err != nil || a2 != 2 || tail2 != tail+1 {
		t.Fatalf("Activate #2 = %d, %d, %v; want 2, %d, nil", a2, tail2, err, tail+1)
	}
	// The superseded writer is fenced even with the right tail.
	if _, err := j.Append(ctx, "s", a1, tail2, assistant(0, "late")); !errors.Is(err, memory.ErrFenced) {
		t.Errorf("Append with superseded activation: error = %v, want ErrFenced", err)
	}
	// Fencing wins over a wrong tail.
	if _, err := j.Append(ctx, "s", a1, 0, assistant(0, "late")); !errors.Is(err, memory.ErrFenced) {
		t.Errorf("Append with superseded activation and stale tail: error = %v, want ErrFenced", err)
	}
	if _, err := j.Append(ctx, "s", 99, tail2, assistant(0, "x")); !errors.Is(err, memory.ErrFenced) {
		t.Errorf("Append with unknown activation: error = %v, want ErrFenced", err)
	}
	tail3 := mustAppend(t, j, "s", a2, tail2, assistant(0, "ok"))
	mustAppend(t, j, "s", 0, tail3, messages.TurnCompleted{Turn: 0, Outcome: messages.OutcomeCompleted})

	got, err := readAll(t, j, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	var acts []messages.Activated
	for _, e := range got {
		if a, ok := e.Event.(messages.Activated); ok {
			acts = append(acts, a)
		}
	}
	want := []messages.Activated{{Activation: 1, Node: "node-a"}, {Activation: 2, Node: "node-b"}}
	if diff := cmp.Diff(want, acts); diff != "" {
		t.Errorf("activated events (-want +got):\n%s", diff)
	}
	st, err := j.Load(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if st.Activation != 2 {
		t.Errorf("State.Activation = %d, want 2", st.Activation)
	}
}

func testSessions(t *testing.T, h Harness) {
	j := h.Journal
	for _, s := range []string{"b", "a", "a.b", "ab", "a b", "中文"} {
		mustAppend(t, j, s, 0, 0, user(0, s))
	}
	var got []string
	for s, err := range j.Sessions(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	want := []string{"a", "a b", "a.b", "ab", "b", "中文"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sessions (-want +got):\n%s", diff)
	}
	// Sessions sharing a prefix keep their own entries.
	es, err := readAll(t, j, "a", 1)
	if err != nil || len(es) != 1 || es[0].Event.(messages.UserMessage).Message.Text() != "a" {
		t.Errorf("Read(a) = %v, %v; want its one entry", es, err)
	}
	// Stopping early is allowed.
	for range j.Sessions(t.Context()) {
		break
	}
}

func testInvalidSession(t *testing.T, h Harness) {
	j := h.Journal
	ctx := t.Context()
	for _, id := range []string{"", "a/b", "nul\x00id", strings.Repeat("x", memory.MaxSessionIDLen+1)} {
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, memory.ErrInvalidSession) {
				t.Errorf("%s(%q) error = %v, want ErrInvalidSession", op, id, err)
				return
			}
			if name := min(len(id), 20); !strings.Contains(err.Error(), fmt.Sprintf("%q", id)[:name+1]) {
				t.Errorf("%s(%q) error %q does not name the id", op, id, err)
			}
		}
		_, err := j.Append(ctx, id, 0, 0, user(0, "x"))
		check("Append", err)
		_, _, err = j.Activate(ctx, id, "n")
		check("Activate", err)
		_, err = j.Tail(ctx, id)
		check("Tail", err)
		_, err = j.Load(ctx, id)
		check("Load", err)
		check("Delete", j.Delete(ctx, id))
		_, err = readAll(t, j, id, 1)
		check("Read", err)
	}
}

func testInvalidEvents(t *testing.T, h Harness) {
	j := h.Journal
	for _, tc := range []struct {
		name string
		evs  []messages.JournalEvent
	}{
		{"none", nil},
		{"system as user", []messages.JournalEvent{messages.UserMessage{Message: messages.SystemText("be nice")}}},
		{"developer as user", []messages.JournalEvent{messages.UserMessage{Message: messages.DeveloperText("x")}}},
		{"user as assistant", []messages.JournalEvent{messages.AssistantMessage{Message: messages.UserText("x")}}},
		{"activated", []messages.JournalEvent{messages.Activated{Activation: 5}}},
		{"result without call", []messages.JournalEvent{messages.ToolResult{Content: "x"}}},
		{"system in compaction", []messages.JournalEvent{messages.Compacted{Kind: "summary", Messages: []messages.Message{messages.SystemText("x")}}}},
		{"valid then invalid", []messages.JournalEvent{user(0, "ok"), messages.UserMessage{Message: messages.SystemText("x")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := j.Append(t.Context(), "s", 0, 0, tc.evs...)
			if !errors.Is(err, memory.ErrInvalidEvent) {
				t.Errorf("Append error = %v, want ErrInvalidEvent", err)
			}
			if tail, _ := j.Tail(t.Context(), "s"); tail != 0 {
				t.Errorf("Tail = %d after a rejected append, want 0", tail)
			}
		})
	}
}

// conversation appends a two-turn conversation with a tool round and
// returns the tail.
func conversation(t *testing.T, j memory.Journal, session string) uint64 {
	t.Helper()
	call := messages.ToolCall{ID: "c1", Name: "read", Arguments: `{"p":"a"}`}
	evs := []messages.JournalEvent{
		user(0, "q0"),
		assistant(0, "", call),
		messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "read", Arguments: call.Arguments},
		messages.ToolResult{Turn: 0, CallID: "c1", Name: "read", Content: "data"},
		assistant(0, "a0"),
		messages.TurnCompleted{Turn: 0, TurnID: "t0", Outcome: messages.OutcomeCompleted},
		messages.AgentSwitched{From: "", To: "coder", Note: "you code"},
		user(1, "q1"),
		assistant(1, "a1"),
		messages.TurnCompleted{Turn: 1, TurnID: "t1", Outcome: messages.OutcomeCompleted},
	}
	var tail uint64
	for _, ev := range evs {
		tail = mustAppend(t, j, session, 0, tail, ev)
	}
	return tail
}

func wantConversation() []messages.Message {
	call := messages.ToolCall{ID: "c1", Name: "read", Arguments: `{"p":"a"}`}
	a := messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call}}
	return []messages.Message{
		messages.UserText("q0"), a, messages.ToolResultMessage("c1", "data"), messages.AssistantText("a0"),
		messages.UserText("q1"), messages.AssistantText("a1"),
	}
}

func testLoad(t *testing.T, h Harness) {
	j := h.Journal
	if _, err := j.Load(t.Context(), "none"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Load(unknown) error = %v, want ErrNotFound", err)
	}
	tail := conversation(t, j, "s")
	st, err := j.Load(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantConversation(), st.Messages(memory.ViewOptions{})); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if st.Seq != tail || st.Turn != 2 || st.Open != nil || st.Agent != "coder" || st.Cost != 1.5 || st.Usage.TotalTokens != 45 {
		t.Errorf("state = seq %d turn %d open %v agent %q cost %v tokens %d; want %d, 2, nil, coder, 1.5, 45",
			st.Seq, st.Turn, st.Open, st.Agent, st.Cost, st.Usage.TotalTokens, tail)
	}
	turns := make(map[string]int, len(st.TurnIDs))
	for id, ref := range st.TurnIDs {
		turns[id] = ref.Turn
	}
	if diff := cmp.Diff(map[string]int{"t0": 0, "t1": 1}, turns); diff != "" {
		t.Errorf("TurnIDs (-want +got):\n%s", diff)
	}
}

// foldAll folds the whole journal from its first entry.
func foldAll(t *testing.T, j memory.Journal, session string) *memory.State {
	t.Helper()
	st := &memory.State{}
	es, err := readAll(t, j, session, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if err := st.Apply(e.Envelope, e.Event); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func testSnapshot(t *testing.T, h Harness) {
	j := h.Journal
	tail := conversation(t, j, "s") // 10 entries, snapshots every 5
	tail = mustAppend(t, j, "s", 0, tail, user(2, "q2"), assistant(2, "a2"))
	want := foldAll(t, j, "s")
	got, err := j.Load(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load with snapshots differs from a full fold (-want +got):\n%s", diff)
	}
	// Load starts from the snapshot: an entry before it is not read again.
	if err := h.Corrupt("s", 3, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	got, err = j.Load(t.Context(), "s")
	if err != nil {
		t.Fatalf("Load after corrupting an entry covered by the snapshot: %v", err)
	}
	if got.Seq != tail || len(got.History) != len(want.History) {
		t.Errorf("Load = seq %d, %d messages; want %d, %d", got.Seq, len(got.History), tail, len(want.History))
	}
}

// testDamagedSnapshot alters the text of a message inside the latest
// snapshot: Load skips the snapshot and replays the journal, so the state
// holds what was journaled.
func testDamagedSnapshot(t *testing.T, h Harness) {
	if h.AlterSnapshot == nil {
		t.Skip("backend has no snapshots")
	}
	j := h.Journal
	conversation(t, j, "s") // 10 entries, a snapshot at 10
	want := foldAll(t, j, "s")
	if err := h.AlterSnapshot("s", func(b []byte) []byte { return []byte(strings.Replace(string(b), `"q1"`, `"q9"`, 1)) }); err != nil {
		t.Fatal(err)
	}
	got, err := j.Load(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load with a damaged snapshot differs from the journal (-want +got):\n%s", diff)
	}
	// The journal is read from its start: a damaged entry covered by the
	// snapshot is now found.
	if err := h.Corrupt("s", 3, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	_, err = j.Load(t.Context(), "s")
	checkCorrupt(t, err, "s", 3, messages.ErrCorrupt)
}

func testNoSnapshots(t *testing.T, h Harness) {
	j := h.Journal
	conversation(t, j, "s")
	if err := h.Corrupt("s", 3, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	_, err := j.Load(t.Context(), "s")
	checkCorrupt(t, err, "s", 3, messages.ErrCorrupt)
}

// checkCorrupt checks that err is a *memory.CorruptError at session/seq
// wrapping memory.ErrCorrupt and cause.
func checkCorrupt(t *testing.T, err error, session string, seq uint64, cause error) {
	t.Helper()
	var ce *memory.CorruptError
	if !errors.As(err, &ce) || ce.Session != session || ce.Seq != seq {
		t.Fatalf("error = %v, want a CorruptError at %s seq %d", err, session, seq)
	}
	if !errors.Is(err, memory.ErrCorrupt) {
		t.Errorf("error = %v, want it to wrap memory.ErrCorrupt", err)
	}
	if cause != nil && !errors.Is(err, cause) {
		t.Errorf("error = %v, want it to wrap %v", err, cause)
	}
	if msg := err.Error(); !strings.Contains(msg, session) || !strings.Contains(msg, fmt.Sprint(seq)) {
		t.Errorf("error %q does not name session %s and seq %d", msg, session, seq)
	}
}

func checkEntryError(t *testing.T, err error, session string, seq uint64, cause error) {
	t.Helper()
	var ee *memory.EntryError
	if !errors.As(err, &ee) || ee.Session != session || ee.Seq != seq {
		t.Fatalf("error = %v, want an EntryError at %s seq %d", err, session, seq)
	}
	var de *messages.DecodeError
	if !errors.As(err, &de) || de.Seq != seq {
		t.Errorf("error = %v, want a messages.DecodeError at seq %d", err, seq)
	}
	if !errors.Is(err, cause) {
		t.Errorf("error = %v, want it to wrap %v", err, cause)
	}
	if msg := err.Error(); !strings.Contains(msg, session) || !strings.Contains(msg, fmt.Sprint(seq)) {
		t.Errorf("error %q does not name session %s and seq %d", msg, session, seq)
	}
}

func testCorruptEntry(t *testing.T, h Harness) {
	j := h.Journal
	tail := mustAppend(t, j, "sess-x", 0, 0, user(0, "1"), user(0, "2"), user(0, "3"), user(0, "4"), user(0, "5"))
	for _, raw := range [][]byte{[]byte("{garbage"), {0xff, 0x00, 0x13}, nil, []byte(`{"v":1,"seq":4,"type":"user_message","data":{}}`)} {
		if err := h.Corrupt("sess-x", 3, raw); err != nil {
			t.Fatal(err)
		}
		got, err := readAll(t, j, "sess-x", 1)
		if diff := cmp.Diff([]uint64{1, 2}, seqs(got)); diff != "" {
			t.Errorf("entries before the corrupt one (-want +got):\n%s", diff)
		}
		checkCorrupt(t, err, "sess-x", 3, messages.ErrCorrupt)
		var de *messages.DecodeError
		if !errors.As(err, &de) || de.Seq != 3 {
			t.Errorf("error = %v, want a messages.DecodeError at seq 3", err)
		}
		after, err := readAll(t, j, "sess-x", 4)
		if err != nil || !slices.Equal(seqs(after), []uint64{4, 5}) {
			t.Errorf("Read from 4 = %v, %v; want 4, 5", seqs(after), err)
		}
		_, err = j.Load(t.Context(), "sess-x")
		checkCorrupt(t, err, "sess-x", 3, messages.ErrCorrupt)
	}
	// The journal still accepts appends after the corrupt entry.
	mustAppend(t, j, "sess-x", 0, tail, user(0, "6"))
}

// testChecksumMismatch alters one byte of a tool call's stored arguments,
// keeping the entry valid JSON: Read and Load report the entry as corrupt
// and never return the altered call.
func testChecksumMismatch(t *testing.T, h Harness) {
	if h.Stored == nil {
		t.Skip("backend gives no access to stored entries")
	}
	j := h.Journal
	call := messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "bash", Arguments: `{"command":"ls /srv/data"}`}
	mustAppend(t, j, "s", 0, 0, user(0, "list it"), assistant(0, "", messages.ToolCall{ID: "c1", Name: "bash", Arguments: call.Arguments}), call)
	raw, err := h.Stored("s", 3)
	if err != nil {
		t.Fatal(err)
	}
	altered := []byte(strings.Replace(string(raw), "/srv/data", "/srv/dbta", 1))
	if string(altered) == string(raw) {
		t.Fatalf("stored entry lacks the arguments: %s", raw)
	}
	if err := h.Corrupt("s", 3, altered); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, j, "s", 1)
	checkCorrupt(t, err, "s", 3, messages.ErrChecksum)
	if len(got) != 2 {
		t.Errorf("Read yielded %d entries before the altered one, want 2", len(got))
	}
	st, err := j.Load(t.Context(), "s")
	checkCorrupt(t, err, "s", 3, messages.ErrChecksum)
	if st != nil {
		t.Errorf("Load returned a state beside the error: %+v", st)
	}
}

// testMissingEntry removes entries: a gap in the middle, and the last
// entries before the tail, are reported as corrupt, naming the first
// missing seq.
func testMissingEntry(t *testing.T, h Harness) {
	if h.Remove == nil {
		t.Skip("backend cannot lose an entry")
	}
	j := h.Journal
	mustAppend(t, j, "gap", 0, 0, user(0, "1"), user(0, "2"), user(0, "3"), user(0, "4"))
	if err := h.Remove("gap", 2); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, j, "gap", 1)
	checkCorrupt(t, err, "gap", 2, nil)
	if !slices.Equal(seqs(got), []uint64{1}) {
		t.Errorf("Read before the gap = %v, want [1]", seqs(got))
	}
	_, err = j.Load(t.Context(), "gap")
	checkCorrupt(t, err, "gap", 2, nil)

	mustAppend(t, j, "end", 0, 0, user(0, "1"), user(0, "2"), user(0, "3"))
	if err := h.Remove("end", 3); err != nil {
		t.Fatal(err)
	}
	got, err = readAll(t, j, "end", 1)
	checkCorrupt(t, err, "end", 3, nil)
	if !slices.Equal(seqs(got), []uint64{1, 2}) {
		t.Errorf("Read before the missing tail = %v, want [1 2]", seqs(got))
	}
	_, err = j.Load(t.Context(), "end")
	checkCorrupt(t, err, "end", 3, nil)
}

// testVersion1Entries stores entries as version 1 wrote them, without a
// checksum: they still load.
func testVersion1Entries(t *testing.T, h Harness) {
	j := h.Journal
	mustAppend(t, j, "s", 0, 0, user(0, "one"), user(0, "two"), user(0, "three"))
	v1 := `{"v":1,"seq":2,"type":"user_message","at":"2025-01-02T03:04:05Z","data":{"turn":0,"turn_id":"t0","message":{"role":"user","content":"two"}}}`
	if err := h.Corrupt("s", 2, []byte(v1)); err != nil {
		t.Fatal(err)
	}
	st, err := j.Load(t.Context(), "s")
	if err != nil {
		t.Fatalf("Load with a version 1 entry: %v", err)
	}
	if len(st.History) != 3 || st.History[1].Text() != "two" {
		t.Errorf("history = %+v", st.History)
	}
	got, err := readAll(t, j, "s", 1)
	if err != nil || len(got) != 3 || got[1].Envelope.V != 1 {
		t.Errorf("Read = %d entries (entry 2 v%d), %v", len(got), got[min(1, len(got)-1)].Envelope.V, err)
	}
}

func testUnknownVersion(t *testing.T, h Harness) {
	j := h.Journal
	mustAppend(t, j, "s", 0, 0, user(0, "1"), user(0, "2"), user(0, "3"))
	raw := []byte(`{"v":99,"seq":2,"type":"user_message","at":"2025-01-02T03:04:05Z","data":{"turn":0,"message":{"role":"user","content":"x"}}}`)
	if err := h.Corrupt("s", 2, raw); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, j, "s", 1)
	if !slices.Equal(seqs(got), []uint64{1}) {
		t.Errorf("entries before the unknown version = %v, want [1]", seqs(got))
	}
	checkEntryError(t, err, "s", 2, messages.ErrUnknownVersion)

	unknownType := []byte(`{"v":1,"seq":2,"type":"from_the_future","at":"2025-01-02T03:04:05Z","data":{}}`)
	if err := h.Corrupt("s", 2, unknownType); err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, j, "s", 1)
	checkEntryError(t, err, "s", 2, messages.ErrUnknownType)
}

func testReadBreak(t *testing.T, h Harness) {
	j := h.Journal
	evs := make([]messages.JournalEvent, 600)
	for i := range evs {
		evs[i] = user(i, fmt.Sprint(i))
	}
	mustAppend(t, j, "s", 0, 0, evs...)
	n := 0
	for _, err := range j.Read(t.Context(), "s", 1) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 300 {
			break
		}
	}
	all, err := readAll(t, j, "s", 1)
	if err != nil || len(all) != 600 || all[599].Envelope.Seq != 600 {
		t.Errorf("Read over pages = %d entries, %v; want 600", len(all), err)
	}
	// A write during a read does not disturb it.
	n = 0
	for _, err := range j.Read(t.Context(), "s", 590) {
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			mustAppend(t, j, "s", 0, 600, user(600, "more"))
		}
		n++
	}
	if n != 11 {
		t.Errorf("Read from 590 with a concurrent append yielded %d entries, want 11 (the tail at the start)", n)
	}
}

func testDelete(t *testing.T, h Harness) {
	j := h.Journal
	ctx := t.Context()
	conversation(t, j, "gone")
	conversation(t, j, "kept")
	if err := j.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := j.Delete(ctx, "never-existed"); err != nil {
		t.Errorf("Delete(unknown) = %v, want nil", err)
	}
	if tail, _ := j.Tail(ctx, "gone"); tail != 0 {
		t.Errorf("Tail after Delete = %d, want 0", tail)
	}
	if es, err := readAll(t, j, "gone", 1); err != nil || len(es) != 0 {
		t.Errorf("Read after Delete = %d entries, %v", len(es), err)
	}
	if _, err := j.Load(ctx, "gone"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Load after Delete error = %v, want ErrNotFound", err)
	}
	for s, err := range j.Sessions(ctx) {
		if err != nil || s == "gone" {
			t.Errorf("Sessions after Delete yielded %q, %v", s, err)
		}
	}
	act, tail, err := j.Activate(ctx, "gone", "n")
	if err != nil || act != 1 || tail != 1 {
		t.Errorf("Activate after Delete = %d, %d, %v; want 1, 1", act, tail, err)
	}
	st, err := j.Load(ctx, "gone")
	if err != nil || len(st.History) != 0 || st.Seq != 1 {
		t.Errorf("Load after re-activation = %+v, %v; want a fresh state", st, err)
	}
	if st, err := j.Load(ctx, "kept"); err != nil || len(st.History) != 6 {
		t.Errorf("Load(kept) = %v; want the other session intact", err)
	}
}

func testConcurrentSameSession(t *testing.T, h Harness) {
	j := h.Journal
	const writers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := 0; i < each; {
				tail, err := j.Tail(t.Context(), "hot")
				if err != nil {
					errs <- err
					return
				}
				_, err = j.Append(t.Context(), "hot", 0, tail, user(w, fmt.Sprintf("%d-%d", w, i)))
				switch {
				case errors.Is(err, memory.ErrConflict):
					continue
				case err != nil:
					errs <- err
					return
				}
				i++
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	es, err := readAll(t, j, "hot", 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, e := range es {
		if e.Envelope.Seq != uint64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Envelope.Seq)
		}
		text := e.Event.(messages.UserMessage).Message.Text()
		if seen[text] {
			t.Errorf("event %s journaled twice", text)
		}
		seen[text] = true
	}
	if len(seen) != writers*each {
		t.Errorf("journaled %d distinct events, want %d", len(seen), writers*each)
	}
}

func testConcurrentSessions(t *testing.T, h Harness) {
	j := h.Journal
	const sessions, each = 20, 10
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for s := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("s%02d", s)
			act, tail, err := j.Activate(t.Context(), id, "n")
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				if tail, err = j.Append(t.Context(), id, act, tail, user(i, id)); err != nil {
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
	n := 0
	for id, err := range j.Sessions(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if tail, _ := j.Tail(t.Context(), id); tail != each+1 {
			t.Errorf("Tail(%s) = %d, want %d", id, tail, each+1)
		}
	}
	if n != sessions {
		t.Errorf("Sessions yielded %d ids, want %d", n, sessions)
	}
}

func testCancelled(t *testing.T, h Harness) {
	j := h.Journal
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := j.Append(ctx, "s", 0, 0, user(0, "x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with a cancelled context: error = %v, want context.Canceled", err)
	}
	if tail, _ := j.Tail(t.Context(), "s"); tail != 0 {
		t.Errorf("Tail = %d after a cancelled append, want 0", tail)
	}
	mustAppend(t, j, "s", 0, 0, user(0, "x"))
	for _, err := range j.Read(ctx, "s", 1) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read with a cancelled context: error = %v, want context.Canceled", err)
		}
	}
}

func testReopen(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("backend does not persist")
	}
	act, tail, err := h.Journal.Activate(t.Context(), "s", "n1")
	if err != nil {
		t.Fatal(err)
	}
	tail = mustAppend(t, h.Journal, "s", act, tail, user(0, "q"), assistant(0, "a"), messages.TurnCompleted{Turn: 0, Outcome: messages.OutcomeCompleted})
	tail = mustAppend(t, h.Journal, "s", act, tail, user(1, "q1"), assistant(1, "", messages.ToolCall{ID: "c", Name: "t", Arguments: "{}"}))
	want := foldAll(t, h.Journal, "s")

	j := h.Reopen(t)
	got, err := j.Load(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state after reopen (-want +got):\n%s", diff)
	}
	if got.Open == nil || len(got.Open.Pending) != 1 {
		t.Errorf("open turn after reopen = %+v, want the pending call", got.Open)
	}
	act2, _, err := j.Activate(t.Context(), "s", "n2")
	if err != nil || act2 != act+1 {
		t.Fatalf("Activate after reopen = %d, %v; want %d", act2, err, act+1)
	}
	if _, err := j.Append(t.Context(), "s", act, tail+1, user(2, "x")); !errors.Is(err, memory.ErrFenced) {
		t.Errorf("old activation after reopen: error = %v, want ErrFenced", err)
	}
}
