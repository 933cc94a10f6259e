package memory_test

import (
	"fmt"
	"sync/atomic"
	"testing"

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
