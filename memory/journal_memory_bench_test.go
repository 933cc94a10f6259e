package memory_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// sessionAppends is how many appends a session of the append benchmarks
// takes before the next session starts, so that no journal grows without
// bound.
const sessionAppends = 1000

// appendJournals are the two journals an in-memory runtime can use, as it
// configures them: a BadgerJournal on an in-memory store, and a
// MemoryJournal.
var appendJournals = []struct {
	name string
	open func(b *testing.B) memory.Journal
}{
	{"badger", func(b *testing.B) memory.Journal {
		store := openStore(b, "")
		b.Cleanup(func() { store.Close() })
		return newJournal(b, store, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotInBackground: true})
	}},
	{"memory", func(b *testing.B) memory.Journal {
		return newMemoryJournal(b, memory.JournalOptions{SnapshotInBackground: true})
	}},
}

// BenchmarkMemoryJournalAppend measures appends of a typical tool result
// to a BadgerJournal on an in-memory store and to a MemoryJournal: from
// one goroutine to one session, and from 64 goroutines each on its own
// session. Each session takes 1,000 appends (two snapshots), then the next
// one starts. It reports the memory/badger ratio of ns/op of the same run.
func BenchmarkMemoryJournalAppend(b *testing.B) {
	ev := messages.ToolResult{CallID: "c", Name: "read", Content: "a tool result of a typical size, a few hundred bytes of text"}
	for _, writers := range []int{1, 64} {
		nsPerOp := map[string]float64{}
		for _, jc := range appendJournals {
			b.Run(fmt.Sprintf("%s/sessions=%d", jc.name, writers), func(b *testing.B) {
				j := jc.open(b)
				var sessions atomic.Int64
				b.SetParallelism((writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					me := sessions.Add(1)
					var id string
					var tail uint64
					for n := 0; pb.Next(); n++ {
						if n%sessionAppends == 0 {
							id, tail = fmt.Sprintf("bench-%d-%d", me, n), 0
						}
						var err error
						if tail, err = j.Append(b.Context(), id, 0, tail, ev); err != nil {
							b.Error(err)
							return
						}
					}
				})
				nsPerOp[jc.name] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			})
		}
		if nsPerOp["badger"] > 0 {
			b.Run(fmt.Sprintf("memory_over_badger/sessions=%d", writers), func(b *testing.B) {
				b.ReportMetric(nsPerOp["memory"]/nsPerOp["badger"], "ratio")
			})
		}
	}
}

// BenchmarkMemoryJournalTurn measures a turn's appends (four appends, six
// events, as BenchmarkTurnAppends does) to an activated session of each journal,
// and the heap an idle session of 5 such turns keeps: 1,000 sessions are
// journaled, then the live heap is measured after a GC, against the heap
// before them (the Badger journal's includes its memtable's share).
func BenchmarkMemoryJournalTurn(b *testing.B) {
	turn := turnEvents()
	for _, jc := range appendJournals {
		b.Run(jc.name, func(b *testing.B) {
			runTurns(b, jc.open(b))
			b.StopTimer()
			b.ReportMetric(idleSessionBytes(b, jc.open(b), turn), "B/idle-session")
		})
	}
}

// idleSessionBytes journals 1,000 sessions of 5 turns each in j and returns
// the live heap they added, per session.
func idleSessionBytes(b *testing.B, j memory.Journal, turn [][]messages.JournalEvent) float64 {
	const sessions, turns = 1000, 5
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for s := range sessions {
		id := fmt.Sprintf("idle-%d", s)
		act, tail, err := j.Activate(b.Context(), id, "bench")
		if err != nil {
			b.Fatal(err)
		}
		for range turns {
			for _, evs := range turn {
				if tail, err = j.Append(b.Context(), id, act, tail, evs...); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(j)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / sessions
}

// BenchmarkMemoryJournalStorage compares the two forms a journal in memory
// could keep a turn's six events in, per turn: encoded, as MemoryJournal
// does (the envelope JSON, masked, with its checksum; a Load decodes it),
// and decoded (the envelope and the event; an append still encodes the
// event's JSON, which masking reads, and a Load reads the events as they
// are, and keeps the caller's events: the least work a decoded journal can
// do). "append" is the work of the appends of a turn, "load" the work of
// reading them back, and B/turn the heap 1,000 turns keep, per turn.
func BenchmarkMemoryJournalStorage(b *testing.B) {
	turn := turnEvents()
	var events []messages.JournalEvent
	for _, evs := range turn {
		events = append(events, evs...)
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	encode := func() [][]byte {
		out := make([][]byte, len(events))
		for i, ev := range events {
			env, err := messages.NewEnvelope(uint64(i+1), at, ev)
			if err != nil {
				b.Fatal(err)
			}
			if out[i], err = env.EncodeTrusted(); err != nil {
				b.Fatal(err)
			}
		}
		return out
	}
	decoded := func() []memory.Entry {
		out := make([]memory.Entry, len(events))
		for i, ev := range events {
			env, err := messages.NewEnvelope(uint64(i+1), at, ev)
			if err != nil {
				b.Fatal(err)
			}
			out[i] = memory.Entry{Envelope: env, Event: ev}
		}
		return out
	}
	b.Run("encoded/append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encode()
		}
		b.ReportMetric(heapPerTurn(func() any { return encode() }), "B/turn")
	})
	b.Run("encoded/load", func(b *testing.B) {
		stored := encode()
		b.ReportAllocs()
		for b.Loop() {
			for i, raw := range stored {
				if _, _, err := messages.DecodeEnvelope(uint64(i+1), raw); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("decoded/append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decoded()
		}
		// The events a runtime journals are on the heap, and a decoded
		// journal keeps them: decoding the stored form gives events as
		// large as the runtime's. The envelope's JSON is dropped.
		stored := encode()
		b.ReportMetric(heapPerTurn(func() any {
			out := make([]memory.Entry, len(stored))
			for i, raw := range stored {
				env, ev, err := messages.DecodeEnvelope(uint64(i+1), raw)
				if err != nil {
					b.Fatal(err)
				}
				env.Data = nil
				out[i] = memory.Entry{Envelope: env, Event: ev}
			}
			return out
		}), "B/turn")
	})
	b.Run("decoded/load", func(b *testing.B) {
		stored := decoded()
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			for _, e := range stored {
				n += int(e.Envelope.Seq)
			}
		}
		runtime.KeepAlive(n)
	})
}

// heapPerTurn returns the live heap that 1,000 results of turn keep, per
// result.
func heapPerTurn(turn func() any) float64 {
	const n = 1000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make([]any, n)
	for i := range kept {
		kept[i] = turn()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
}
