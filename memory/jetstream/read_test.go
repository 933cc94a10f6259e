package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream/natstest"
)

// TestReadManyRecords reads a journal of more records than one consumer
// fetch delivers, from several places, and loads it with and without a
// snapshot.
func TestReadManyRecords(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	for _, every := range []int{-1, 100} {
		t.Run(fmt.Sprintf("snapshotEvery=%d", every), func(t *testing.T) {
			j := newJournal(t, srv.URL(), Config{Stream: fmt.Sprintf("S%d", every+1), Subject: fmt.Sprintf("s%d", every+1),
				Options: memory.JournalOptions{Durability: memory.DurabilityBatch, SnapshotEvery: every}})
			const n = 600
			var tail uint64
			for i := range n {
				var err error
				if tail, err = j.Append(t.Context(), "s", 0, tail, userText(fmt.Sprint(i))); err != nil {
					t.Fatal(err)
				}
			}
			for _, from := range []uint64{0, 1, 7, 9, 255, 256, 257, 599, 600, 601} {
				var got []uint64
				for e, err := range j.Read(t.Context(), "s", from) {
					if err != nil {
						t.Fatalf("Read(from %d): %v", from, err)
					}
					got = append(got, e.Envelope.Seq)
				}
				var want []uint64
				for s := max(from, 1); s <= n; s++ {
					want = append(want, s)
				}
				if !slices.Equal(got, want) {
					t.Errorf("Read(from %d) = %d entries from %v, want %d", from, len(got), got[:min(1, len(got))], len(want))
				}
			}
			st, err := j.Load(t.Context(), "s")
			if err != nil || st.Seq != n || len(st.History) != n {
				t.Fatalf("Load = %v, %v; want %d messages", st, err, n)
			}
		})
	}
}

// TestMissingRecord removes an entry from the middle of a session's
// journal, as an operator purging part of a subject would: Read and Load
// report the first missing entry as corrupt, and the entries before it stay
// readable.
func TestMissingRecord(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	j := newJournal(t, srv.URL(), Config{Options: memory.JournalOptions{SnapshotEvery: -1}})
	ctx := context.Background()
	var tail uint64
	for i := range 12 {
		var err error
		if tail, err = j.Append(ctx, "s", 0, tail, userText(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		drop    func(msgs []*njs.RawStreamMsg) []*njs.RawStreamMsg
		missing uint64
		before  int
	}{
		{"middle", func(m []*njs.RawStreamMsg) []*njs.RawStreamMsg { return slices.Concat(m[:4], m[5:]) }, 5, 4},
		{"first", func(m []*njs.RawStreamMsg) []*njs.RawStreamMsg { return m[1:] }, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, subj := j.stream("s"), j.entrySubject("s")
			msgs, err := storedRecords(ctx, st, subj)
			if err != nil {
				t.Fatal(err)
			}
			if err := republish(ctx, j.js, st, subj, tc.drop(msgs)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := republish(ctx, j.js, st, subj, msgs); err != nil {
					t.Fatal(err)
				}
			})
			n := 0
			var rerr error
			for _, err := range j.Read(ctx, "s", 1) {
				if err != nil {
					rerr = err
					break
				}
				n++
			}
			checkMissing(t, rerr, tc.missing)
			if n != tc.before {
				t.Errorf("Read yielded %d entries before the gap, want %d", n, tc.before)
			}
			_, err = j.Load(ctx, "s")
			checkMissing(t, err, tc.missing)
		})
	}
	if _, err := j.Append(ctx, "s", 0, tail, userText("after")); err != nil {
		t.Errorf("append after the records were restored: %v", err)
	}
}

func checkMissing(t *testing.T, err error, seq uint64) {
	t.Helper()
	ce, ok := errors.AsType[*memory.CorruptError](err)
	if !ok || ce.Seq != seq || !errors.Is(err, memory.ErrCorrupt) {
		t.Errorf("error = %v, want a CorruptError at seq %d", err, seq)
	}
}

// TestReadWithoutConsumer reads and loads a long journal whose stream
// admits no more consumers, as when the cluster's meta group (which
// creates them) has no leader: the read goes on one message per request.
func TestReadWithoutConsumer(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	j := newJournal(t, srv.URL(), Config{Options: memory.JournalOptions{SnapshotEvery: -1}})
	ctx := t.Context()
	cfg := j.streamConfig(0)
	cfg.MaxConsumers = 1
	st, err := j.js.UpdateStream(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateConsumer(ctx, njs.ConsumerConfig{Name: "the-only-one", AckPolicy: njs.AckNonePolicy}); err != nil {
		t.Fatal(err)
	}
	var tail uint64
	for i := range 100 {
		if tail, err = j.Append(ctx, "s", 0, tail, userText(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateConsumer(ctx, njs.ConsumerConfig{AckPolicy: njs.AckNonePolicy}); err == nil {
		t.Fatal("the stream admitted a second consumer")
	}
	n := uint64(0)
	for e, err := range j.Read(ctx, "s", 1) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if e.Envelope.Seq != n {
			t.Fatalf("entry %d has seq %d", n, e.Envelope.Seq)
		}
	}
	if n != tail {
		t.Errorf("Read yielded %d entries, want %d", n, tail)
	}
	if st, err := j.Load(ctx, "s"); err != nil || st.Seq != tail {
		t.Errorf("Load = %v, %v; want seq %d", st, err, tail)
	}
}
