package actors_test

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// countingJournal counts the entries its Read yields.
type countingJournal struct {
	memory.Journal
	read atomic.Int64
}

func (j *countingJournal) Read(ctx context.Context, session string, from uint64) iter.Seq2[memory.Entry, error] {
	return func(yield func(memory.Entry, error) bool) {
		for e, err := range j.Journal.Read(ctx, session, from) {
			j.read.Add(1)
			if !yield(e, err) {
				return
			}
		}
	}
}

// TestResubmit_ReadsOnlyItsTurn plays many turns with client turn ids,
// then resubmits ids of old turns: each resubmission reads the journal
// entries of its own turn, not the whole journal, and reports how that
// turn ended without running it again.
func TestResubmit_ReadsOnlyItsTurn(t *testing.T) {
	const turns = 150
	j := &countingJournal{Journal: goldenJournal(t)}
	f := newFixture(t, textScript("ok"), nil, nil)
	rt, err := actors.New(actors.Config{Journal: j, Provider: f.prov})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	sess, err := rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	for i := range turns {
		if _, err := sess.Submit(t.Context(), messages.UserText(fmt.Sprintf("hi %d", i)), actors.WithTurnID(fmt.Sprintf("t-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	calls := f.prov.Calls()
	total, err := j.Tail(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, turns / 2, turns - 1} {
		before := j.read.Load()
		res, err := sess.Submit(t.Context(), messages.UserText("again"), actors.WithTurnID(fmt.Sprintf("t-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if res.Turn != i || res.Outcome != messages.OutcomeCompleted || res.Text != "ok" {
			t.Errorf("resubmission of t-%d = %+v", i, res)
		}
		n := j.read.Load() - before
		t.Logf("resubmitting t-%d read %d of %d journal entries", i, n, total)
		if n > 10 {
			t.Errorf("resubmitting t-%d read %d journal entries of %d, want those of its turn only", i, n, total)
		}
	}
	if f.prov.Calls() != calls {
		t.Errorf("a resubmission called the model")
	}
}
