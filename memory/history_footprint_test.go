package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// maxSlack is the most unused capacity a history of n messages may keep
// once it has grown: half as many slots (a third of the array), and at
// most four for a short one.
func maxSlack(n int) int { return max(4, n/2) }

// checkFitted fails unless History and HistorySeq hold no unused capacity.
func checkFitted(t *testing.T, what string, st *memory.State) {
	t.Helper()
	if cap(st.History) != len(st.History) || cap(st.HistorySeq) != len(st.HistorySeq) {
		t.Errorf("%s: History len %d cap %d, HistorySeq len %d cap %d; want each cap equal to its len",
			what, len(st.History), cap(st.History), len(st.HistorySeq), cap(st.HistorySeq))
	}
}

// TestStateHistorySlack folds turns of plain answers and of tool calls
// whose results come out of order, and checks after each turn that the
// history keeps little unused capacity: append's doubling left a
// ten-message history in a sixteen-slot array.
func TestStateHistorySlack(t *testing.T) {
	st := &memory.State{}
	for turn := range 60 {
		apply(t, st, userMsg(turn, "q"))
		if turn%3 == 2 {
			apply(t, st,
				messages.AssistantMessage{Turn: turn, Message: assistantCalling("a", "b", "c")},
				result(turn, "c", "C"), result(turn, "a", "A"), result(turn, "b", "B"))
		}
		apply(t, st,
			messages.AssistantMessage{Turn: turn, Message: messages.AssistantText("done")},
			messages.TurnCompleted{Turn: turn, TurnID: fmt.Sprintf("id-%d", turn)})
		n := len(st.History)
		if slack := cap(st.History) - n; slack > maxSlack(n) {
			t.Fatalf("after turn %d: History holds %d messages in %d slots (%d unused, want at most %d)", turn, n, cap(st.History), slack, maxSlack(n))
		}
		if slack := cap(st.HistorySeq) - len(st.HistorySeq); slack > maxSlack(n) {
			t.Fatalf("after turn %d: HistorySeq holds %d seqs in %d slots, want at most %d unused", turn, len(st.HistorySeq), cap(st.HistorySeq), maxSlack(n))
		}
	}
	// The order of the tool messages is the fold's, not the slack's.
	for i, m := range st.History[6:9] {
		if want := []string{"a", "b", "c"}[i]; m.ToolCallID != want {
			t.Errorf("tool message %d answers %q, want %q", i, m.ToolCallID, want)
		}
	}
}

// TestStateTrim checks that Trim leaves History and HistorySeq without
// unused capacity and with the same contents.
func TestStateTrim(t *testing.T) {
	st := &memory.State{}
	for turn := range 5 {
		apply(t, st, userMsg(turn, "q"), messages.AssistantMessage{Turn: turn, Message: messages.AssistantText("a")})
	}
	want := slicesClone(st)
	st.Trim()
	checkFitted(t, "after Trim", st)
	if diff := cmp.Diff(want, slicesClone(st)); diff != "" {
		t.Errorf("Trim changed the history (-want +got):\n%s", diff)
	}
	var empty memory.State
	empty.Trim()
	if empty.History != nil || empty.HistorySeq != nil {
		t.Errorf("Trim of an empty state made History %v, HistorySeq %v; want nil", empty.History, empty.HistorySeq)
	}
}

func slicesClone(st *memory.State) memory.State {
	return memory.State{History: append([]messages.Message(nil), st.History...), HistorySeq: append([]uint64(nil), st.HistorySeq...)}
}

// TestJournalLoad_HistoryFitted loads sessions from both journals, with
// and without a snapshot under the entries: the loaded history is sized
// to what it holds.
func TestJournalLoad_HistoryFitted(t *testing.T) {
	for _, every := range []int{-1, 4} {
		opts := memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: every}
		mem, err := memory.NewMemoryJournal(opts)
		if err != nil {
			t.Fatal(err)
		}
		journals := map[string]interface {
			memory.Journal
			Snapshot(context.Context, string) error
		}{
			"memory": mem,
			"badger": newJournal(t, openStore(t, ""), opts),
		}
		for name, j := range journals {
			ctx := t.Context()
			_, tail, err := j.Activate(ctx, "s", "n")
			if err != nil {
				t.Fatal(err)
			}
			for turn := range 5 {
				tail, err = j.Append(ctx, "s", 1, tail, userMsg(turn, "q"),
					messages.AssistantMessage{Turn: turn, Message: messages.AssistantText("a")},
					messages.TurnCompleted{Turn: turn, TurnID: fmt.Sprintf("id-%d", turn)})
				if err != nil {
					t.Fatal(err)
				}
			}
			if every > 0 {
				if err := j.Snapshot(ctx, "s"); err != nil {
					t.Fatal(err)
				}
				if tail, err = j.Append(ctx, "s", 1, tail, userMsg(5, "q")); err != nil {
					t.Fatal(err)
				}
			}
			st, err := j.Load(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			if want := 10 + boolInt(every > 0); len(st.History) != want {
				t.Fatalf("%s journal, snapshot every %d: %d messages loaded, want %d", name, every, len(st.History), want)
			}
			checkFitted(t, fmt.Sprintf("%s journal, snapshot every %d", name, every), st)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestStateJSON_TurnIndex decodes a state written when the turn index was
// two maps (turn_ids and turn_seqs), as snapshots hold it, and checks that
// encoding it again gives the same JSON: old snapshots load, and builds
// that read the two maps read what this one writes.
func TestStateJSON_TurnIndex(t *testing.T) {
	old, err := os.ReadFile("testdata/state-two-turn-maps.json")
	if err != nil {
		t.Fatal(err)
	}
	var st memory.State
	if err := json.Unmarshal(old, &st); err != nil {
		t.Fatalf("decode the stored state: %v", err)
	}
	want := map[string]memory.TurnRef{"id-0": {Turn: 0, Seq: 2}, "id-1": {Turn: 1, Seq: 5}}
	if diff := cmp.Diff(want, st.TurnIDs); diff != "" {
		t.Errorf("TurnIDs (-want +got):\n%s", diff)
	}
	if len(st.History) != 4 || st.Seq != 7 || st.Turn != 2 {
		t.Errorf("decoded %d messages, seq %d, turn %d; want 4, 7, 2", len(st.History), st.Seq, st.Turn)
	}
	again, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	var wantJSON, gotJSON map[string]any
	if err := json.Unmarshal(old, &wantJSON); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &gotJSON); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantJSON, gotJSON); diff != "" {
		t.Errorf("encoded again (-stored +got):\n%s", diff)
	}

	// A state written before turn_seqs existed knows no seqs.
	var older memory.State
	if err := json.Unmarshal([]byte(`{"seq":3,"turn":1,"turn_ids":{"x":0}}`), &older); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]memory.TurnRef{"x": {Turn: 0}}, older.TurnIDs); diff != "" {
		t.Errorf("TurnIDs without turn_seqs (-want +got):\n%s", diff)
	}
	// A seq without its turn id is dropped, as the fold never makes one.
	var stray memory.State
	if err := json.Unmarshal([]byte(`{"seq":3,"turn_seqs":{"x":2}}`), &stray); err != nil {
		t.Fatal(err)
	}
	if stray.TurnIDs != nil {
		t.Errorf("TurnIDs from a lone seq = %v, want nil", stray.TurnIDs)
	}
}

// BenchmarkStateFoldTurns folds sessions of 50 turns (user message,
// assistant message calling two tools, their results, answer): the CPU
// and bytes that growing the history costs per turn.
func BenchmarkStateFoldTurns(b *testing.B) {
	const turns = 50
	var evs []messages.JournalEvent
	for turn := range turns {
		evs = append(evs, userMsg(turn, "q"),
			messages.AssistantMessage{Turn: turn, Message: assistantCalling("a", "b")},
			result(turn, "b", "B"), result(turn, "a", "A"),
			messages.AssistantMessage{Turn: turn, Message: messages.AssistantText("done")},
			messages.TurnCompleted{Turn: turn, TurnID: fmt.Sprintf("id-%d", turn)})
	}
	b.ReportAllocs()
	for b.Loop() {
		st := &memory.State{}
		for i, ev := range evs {
			if err := st.Apply(messages.Envelope{Seq: uint64(i) + 1}, ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
}
