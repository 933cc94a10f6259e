package schedule_test

import (
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/schedule"
)

// BenchmarkStore_FireFinish measures journaling one fire and its finish:
// two synced transactions on disk, the scheduler's own cost per run.
func BenchmarkStore_FireFinish(b *testing.B) {
	for _, tc := range []struct {
		name     string
		inMemory bool
	}{{"disk", false}, {"memory", true}} {
		b.Run(tc.name, func(b *testing.B) {
			opts := memory.Options{InMemory: tc.inMemory}
			if !tc.inMemory {
				opts.Dir = b.TempDir()
			}
			mem, err := memory.Open(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer mem.Close()
			s := schedule.New(mem, schedule.Options{Clock: func() time.Time { return t0 }})
			if _, err := s.Create(b.Context(), "b", schedule.Spec{Expr: "@every 1s", Prompt: "p"}, "bench"); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				now := t0.Add(time.Duration(i) * time.Second)
				f, _, err := s.Fire(b.Context(), "b", now, false)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Finish(b.Context(), "b", f.N, now, "completed", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseCron measures parsing an expression in a time zone.
func BenchmarkParseCron(b *testing.B) {
	for b.Loop() {
		if _, err := schedule.ParseCron("*/15 9-17 * * 1-5", "UTC"); err != nil {
			b.Fatal(err)
		}
	}
}
