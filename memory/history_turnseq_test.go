package memory_test

import (
	"fmt"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// TestStateTurnSeqs checks that each client turn id is indexed with the
// sequence number of its turn's user message, and leaves the index with
// its id when TurnIDs is full.
func TestStateTurnSeqs(t *testing.T) {
	st := &memory.State{}
	for i := range memory.MaxTurnIDs + 3 {
		apply(t, st, userMsg(i, "q"), messages.TurnCompleted{Turn: i, TurnID: fmt.Sprintf("id-%d", i)})
	}
	if len(st.TurnSeqs) != len(st.TurnIDs) {
		t.Errorf("%d indexed seqs for %d turn ids", len(st.TurnSeqs), len(st.TurnIDs))
	}
	for id, turn := range st.TurnIDs {
		if want := uint64(2*turn + 1); st.TurnSeqs[id] != want {
			t.Errorf("TurnSeqs[%s] = %d, want %d (its user message)", id, st.TurnSeqs[id], want)
		}
	}
	if _, ok := st.TurnSeqs["id-0"]; ok {
		t.Error("the evicted turn id is still indexed")
	}
}
