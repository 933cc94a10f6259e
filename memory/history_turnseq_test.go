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
	for id, ref := range st.TurnIDs {
		if want := uint64(2*ref.Turn + 1); ref.Seq != want {
			t.Errorf("TurnIDs[%s].Seq = %d, want %d (its user message)", id, ref.Seq, want)
		}
	}
	if _, ok := st.TurnIDs["id-0"]; ok {
		t.Error("the evicted turn id is still indexed")
	}
}
