package memory_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// BenchmarkJournalAppend measures appends/s of concurrent appenders (32 per
// CPU, each on its own session) on disk, per durability mode, and reports
// the batch/sync ratio of the same run.
func BenchmarkJournalAppend(b *testing.B) {
	rates := map[memory.Durability]float64{}
	for _, d := range durabilities {
		b.Run(d.String(), func(b *testing.B) {
			store := openStore(b, b.TempDir())
			defer store.Close()
			j := newJournal(b, store, memory.JournalOptions{Durability: d, SnapshotEvery: -1})
			ev := messages.ToolResult{CallID: "c", Name: "read", Content: "a tool result of a typical size, a few hundred bytes of text"}
			var sessions atomic.Int64
			b.SetParallelism(32)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				id := fmt.Sprintf("bench-%d", sessions.Add(1))
				var tail uint64
				for pb.Next() {
					var err error
					if tail, err = j.Append(b.Context(), id, 0, tail, ev); err != nil {
						b.Error(err)
						return
					}
				}
			})
			rate := float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "appends/s")
			rates[d] = rate
		})
	}
	if rates[memory.DurabilitySync] > 0 {
		b.Run("batch_over_sync", func(b *testing.B) {
			b.ReportMetric(rates[memory.DurabilityBatch]/rates[memory.DurabilitySync], "ratio")
		})
	}
}

// BenchmarkLoad measures Load of a small session (a user message, a tool
// round and an answer, as after one turn) in a store holding 1,000 such
// sessions on disk, with and without a snapshot to start from.
func BenchmarkLoad(b *testing.B) {
	for _, snap := range []bool{false, true} {
		b.Run(fmt.Sprintf("snapshot=%v", snap), func(b *testing.B) {
			dir := b.TempDir()
			store := openStore(b, dir)
			every := -1
			if snap {
				every = 4
			}
			j := newJournal(b, store, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: every})
			const sessions = 1000
			call := messages.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}
			for i := range sessions {
				id := fmt.Sprintf("s-%04d", i)
				_, tail, err := j.Activate(b.Context(), id, "bench")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := j.Append(b.Context(), id, 0, tail,
					messages.UserMessage{TurnID: "t", Message: messages.UserText("hello")},
					messages.AssistantMessage{Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call}}, FinishReason: messages.FinishToolCalls},
					messages.ToolCallStarted{CallID: "c1", Name: "read", Arguments: call.Arguments},
					messages.ToolResult{CallID: "c1", Name: "read", Content: "contents"},
					messages.AssistantMessage{Message: messages.AssistantText("done"), FinishReason: messages.FinishStop},
					messages.TurnCompleted{TurnID: "t", Outcome: messages.OutcomeCompleted},
				); err != nil {
					b.Fatal(err)
				}
			}
			if err := j.Close(); err != nil {
				b.Fatal(err)
			}
			if err := store.Close(); err != nil {
				b.Fatal(err)
			}
			store = openStore(b, dir)
			defer store.Close()
			j = newJournal(b, store, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: every})
			b.ResetTimer()
			i := 0
			for b.Loop() {
				st, err := j.Load(b.Context(), fmt.Sprintf("s-%04d", i%sessions))
				if err != nil {
					b.Fatal(err)
				}
				if len(st.History) != 4 {
					b.Fatalf("history has %d messages, want 4", len(st.History))
				}
				i++
			}
		})
	}
}

// BenchmarkChecksums measures what the entry checksums cost, in one run:
// appends of one tool result (without fsync, so that the CPU work shows)
// and Loads of a 60-entry session, on two journals side by side, one
// writing version 2 entries (checksummed, verified on every read) and one
// writing version 1 entries (plain JSON, as before checksums). Each
// iteration does the operation on both, in alternating order, and times
// each; the ratio metric is checksummed over plain (1.05 is the budget).
func BenchmarkChecksums(b *testing.B) {
	result := messages.ToolResult{Turn: 3, CallID: "call_7f3a", Name: "read_file",
		Content: strings.Repeat("a line of a file the tool read, as the model will see it\n", 6)}
	journals := func(b *testing.B) [2]*memory.BadgerJournal {
		var js [2]*memory.BadgerJournal
		for i := range js {
			store := openStore(b, b.TempDir())
			b.Cleanup(func() { _ = store.Close() })
			js[i] = newJournal(b, store, memory.JournalOptions{Durability: memory.DurabilityNone, SnapshotEvery: -1})
		}
		memory.WriteUnsealed(js[1])
		return js
	}
	report := func(b *testing.B, spent [2]time.Duration) {
		n := float64(b.N)
		b.ReportMetric(float64(spent[0].Nanoseconds())/n, "checksummed-ns/op")
		b.ReportMetric(float64(spent[1].Nanoseconds())/n, "plain-ns/op")
		b.ReportMetric(float64(spent[0])/float64(spent[1]), "ratio")
	}
	b.Run("append", func(b *testing.B) {
		js := journals(b)
		var (
			tails [2]uint64
			spent [2]time.Duration
			round int
		)
		for b.Loop() {
			for k := range 2 {
				k = (k + round) % 2
				start := time.Now()
				tail, err := js[k].Append(b.Context(), "s", 0, tails[k], result)
				spent[k] += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				tails[k] = tail
			}
			round++
		}
		report(b, spent)
	})
	b.Run("load", func(b *testing.B) {
		js := journals(b)
		for _, j := range js {
			var tail uint64
			for range 60 {
				var err error
				if tail, err = j.Append(b.Context(), "s", 0, tail, result); err != nil {
					b.Fatal(err)
				}
			}
		}
		var (
			spent [2]time.Duration
			round int
		)
		for b.Loop() {
			for k := range 2 {
				k = (k + round) % 2
				start := time.Now()
				st, err := js[k].Load(b.Context(), "s")
				spent[k] += time.Since(start)
				if err != nil || st.Seq != 60 {
					b.Fatalf("Load = %v, %v", st, err)
				}
			}
			round++
		}
		report(b, spent)
	})
}

// turnEvents are the journal appends of one turn of the benchmark
// workloads, as the session actor makes them: the user message; the reply
// calling a tool with the call's start (one step, one append); the tool's
// result; the answer with the end of the turn.
func turnEvents() [][]messages.JournalEvent {
	call := messages.ToolCall{ID: "call_1", Name: "lookup", Arguments: `{"key":"alpha"}`}
	return [][]messages.JournalEvent{
		{messages.UserMessage{TurnID: "t-1", Message: messages.UserText("What is the value of alpha? Use the lookup tool.")}},
		{
			messages.AssistantMessage{Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call}},
				FinishReason: messages.FinishToolCalls, Model: "scripted", Usage: messages.Usage{PromptTokens: 40, CompletionTokens: 8, TotalTokens: 48}},
			messages.ToolCallStarted{CallID: call.ID, Name: call.Name, Arguments: call.Arguments},
		},
		{messages.ToolResult{CallID: call.ID, Name: call.Name, Content: "value-of-alpha", Duration: 12 * time.Microsecond}},
		{
			messages.AssistantMessage{Message: messages.AssistantText("The value of alpha is value-of-alpha."), FinishReason: messages.FinishStop,
				Model: "scripted", Usage: messages.Usage{PromptTokens: 70, CompletionTokens: 9, TotalTokens: 79}},
			messages.TurnCompleted{TurnID: "t-1", Outcome: messages.OutcomeCompleted, FinishReason: messages.FinishStop,
				Usage: messages.Usage{PromptTokens: 110, CompletionTokens: 17, TotalTokens: 127}, RoundTrips: 2},
		},
	}
}

// BenchmarkTurnAppends measures the journal's share of a turn: the four
// appends of one turn (six events) to an activated session, on an
// in-memory store without fsync, as actors.NewInMemory journals. One op is
// one turn; a session takes 16 turns, then the next session starts, as in
// the turn-overhead workload.
func BenchmarkTurnAppends(b *testing.B) {
	store := openStore(b, "")
	defer store.Close()
	runTurns(b, newJournal(b, store, memory.JournalOptions{Durability: memory.DurabilityNone}))
}

// runTurns journals one turn (turnEvents, four appends) per op in j; a
// session takes 16 turns, then the next session starts, activated outside
// the timer.
func runTurns(b *testing.B, j memory.Journal) {
	turn := turnEvents()
	var (
		id         string
		act, tail  uint64
		turns, ses int
	)
	b.ReportAllocs()
	for b.Loop() {
		if turns%16 == 0 {
			b.StopTimer()
			ses++
			id = fmt.Sprintf("turns-%d", ses)
			var err error
			if act, tail, err = j.Activate(b.Context(), id, "bench"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		for _, evs := range turn {
			var err error
			if tail, err = j.Append(b.Context(), id, act, tail, evs...); err != nil {
				b.Fatal(err)
			}
		}
		turns++
	}
}

// BenchmarkSyncWriters measures whether concurrent appenders share fsyncs:
// appends/s to an on-disk store with one appender and with 64 (each on its
// own session), per durability mode that fsyncs, in the same run. A
// writers-64 rate far above the writers-1 rate means the appenders share
// the fsyncs (one fsync costs the same whoever waits for it).
func BenchmarkSyncWriters(b *testing.B) {
	ev := messages.ToolResult{CallID: "c", Name: "read", Content: "a tool result of a typical size, a few hundred bytes of text"}
	for _, d := range []memory.Durability{memory.DurabilitySync, memory.DurabilityBatch} {
		for _, writers := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", d, writers), func(b *testing.B) {
				store := openStore(b, b.TempDir())
				defer store.Close()
				j := newJournal(b, store, memory.JournalOptions{Durability: d, SnapshotEvery: -1})
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for w := range writers {
					wg.Go(func() {
						id := fmt.Sprintf("w-%d", w)
						var tail uint64
						for next.Add(1) <= int64(b.N) {
							var err error
							if tail, err = j.Append(b.Context(), id, 0, tail, ev); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
			})
		}
	}
}
