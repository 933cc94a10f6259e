package jetstream

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream/natstest"
)

// benchBackend is a journal to measure and how it was set up.
type benchBackend struct {
	name  string
	setup func(b *testing.B) memory.Journal
}

func badgerBackend(d memory.Durability) benchBackend {
	return benchBackend{fmt.Sprintf("badger/%s", d), func(b *testing.B) memory.Journal {
		s, err := memory.Open(memory.Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		j, err := memory.NewJournal(s, memory.JournalOptions{Durability: d})
		if err != nil {
			b.Fatal(err)
		}
		return j
	}}
}

func natsBackend(name string, servers int, d memory.Durability) benchBackend {
	return benchBackend{name, func(b *testing.B) memory.Journal {
		o := natstest.Options{SyncAlways: d == memory.DurabilitySync}
		url := ""
		if servers == 1 {
			url = natstest.RunServer(b, o).URL()
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			url = natstest.RunCluster(ctx, b, servers, o).URLs()
		}
		nc := natstest.Connect(b, url, nats.MaxReconnects(-1))
		// Both journals keep the default snapshot interval (500 events).
		j, err := New(context.Background(), Config{Conn: nc, Replicas: servers, Options: memory.JournalOptions{Durability: d}})
		if err != nil {
			b.Fatal(err)
		}
		return j
	}}
}

// benchBackends are measured in this order; the first is the baseline
// of the ratios.
func benchBackends() []benchBackend {
	return []benchBackend{
		badgerBackend(memory.DurabilitySync),
		badgerBackend(memory.DurabilityBatch),
		natsBackend("nats-R1-file/batch", 1, memory.DurabilityBatch),
		natsBackend("nats-R1-file/sync", 1, memory.DurabilitySync),
		natsBackend("nats-R1-memory/none", 1, memory.DurabilityNone),
		natsBackend("nats-R3-file/batch", 3, memory.DurabilityBatch),
		natsBackend("nats-R3-file/sync", 3, memory.DurabilitySync),
	}
}

// reportLatencies reports the p50 and p99 of lat, and the p50's ratio to
// base; isBase says lat is the baseline's.
func reportLatencies(b *testing.B, lat []time.Duration, base *time.Duration, isBase bool) {
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
	if isBase {
		*base = p50 // the baseline's last round, which the others follow
	}
	b.ReportMetric(float64(p50)/float64(*base), "p50-x-baseline")
}

// BenchmarkAppend measures one writer appending one user message at a time
// to one session, on Badger and on JetStream, in the same run.
func BenchmarkAppend(b *testing.B) {
	var base time.Duration
	for i, be := range benchBackends() {
		b.Run(be.name, func(b *testing.B) {
			j := be.setup(b)
			ctx := context.Background()
			act, tail, err := j.Activate(ctx, "bench", "n")
			if err != nil {
				b.Fatal(err)
			}
			for range 100 { // settle: a new replicated stream may still be electing
				if tail, err = j.Append(ctx, "bench", act, tail, userText("warm-up")); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if tail, err = j.Append(ctx, "bench", act, tail, userText(fmt.Sprintf("message %d of the benchmark", i))); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			reportLatencies(b, lat, &base, i == 0)
		})
	}
}

// BenchmarkLoad measures loading a session of 200 entries, each appended
// on its own, with no snapshot to start from.
func BenchmarkLoad(b *testing.B) {
	var base time.Duration
	for i, be := range benchBackends() {
		b.Run(be.name, func(b *testing.B) {
			j := be.setup(b)
			ctx := context.Background()
			var tail uint64
			var err error
			for i := range 200 {
				if tail, err = j.Append(ctx, "bench", 0, tail, userText(fmt.Sprint(i))); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				st, err := j.Load(ctx, "bench")
				if err != nil || st.Seq != 200 {
					b.Fatalf("Load = %v, %v", st, err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			reportLatencies(b, lat, &base, i == 0)
		})
	}
}
