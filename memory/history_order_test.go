package memory_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// callIDs returns the ids c0 ... c(n-1).
func callIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%d", i)
	}
	return ids
}

// TestStateApply_ResultsInCallOrder folds the results of one reply's calls
// in many arrival orders (in order, reversed, shuffled): the history
// always holds them in call order, and HistorySeq never decreases.
func TestStateApply_ResultsInCallOrder(t *testing.T) {
	const n = 16
	ids := callIDs(n)
	rng := rand.New(rand.NewPCG(1, 2))
	reversed := slices.Clone(ids)
	slices.Reverse(reversed)
	orders := map[string][]string{"in order": ids, "reversed": reversed}
	for k := range 8 {
		p := slices.Clone(ids)
		rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
		orders[fmt.Sprintf("shuffled %d", k)] = p
	}
	for name, arrival := range orders {
		t.Run(name, func(t *testing.T) {
			st := fold(t, userMsg(0, "q"), asst(0, "", ids...))
			for _, id := range arrival {
				apply(t, st, result(0, id, "R"+id))
			}
			h := st.History[2:]
			if len(h) != n {
				t.Fatalf("history holds %d results, want %d", len(h), n)
			}
			for i, m := range h {
				if m.ToolCallID != ids[i] || m.Text() != "R"+ids[i] {
					t.Errorf("history[%d] = %s %q, want %s", i+2, m.ToolCallID, m.Text(), ids[i])
				}
			}
			if !slices.IsSorted(st.HistorySeq) {
				t.Errorf("HistorySeq decreases: %v", st.HistorySeq)
			}
		})
	}
}

// BenchmarkStateApply_Results64 folds the 64 results of one reply, in call
// order and shuffled, as a session does when parallel calls end.
func BenchmarkStateApply_Results64(b *testing.B) {
	ids := callIDs(64)
	shuffled := slices.Clone(ids)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for name, arrival := range map[string][]string{"in order": ids, "shuffled": shuffled} {
		b.Run(name, func(b *testing.B) {
			evs := make([]messages.JournalEvent, 0, len(arrival))
			for _, id := range arrival {
				evs = append(evs, result(0, id, "R"))
			}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				st := &memory.State{}
				seq := uint64(0)
				step := func(ev messages.JournalEvent) {
					seq++
					if err := st.Apply(messages.Envelope{Seq: seq}, ev); err != nil {
						b.Fatal(err)
					}
				}
				step(userMsg(0, "q"))
				step(asst(0, "", ids...))
				b.StartTimer()
				for _, ev := range evs {
					step(ev)
				}
			}
		})
	}
}
