package benchsuite

import (
	"flag"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/providers/scripted"
)

// The benchmarks run the workloads of `agcore bench` under `go test
// -bench`. Each runs its workload (baseline included) once per iteration
// and reports the figures of the last run as custom metrics, so run them
// with -benchtime 1x. Set -short for the quick sizes.

func benchQuick() bool { return testing.Short() }

// BenchmarkTurnOverhead: a turn through the runtime vs a bare go-openai
// loop against the same mock server.
func BenchmarkTurnOverhead(b *testing.B) {
	var res *TurnOverheadResult
	for b.Loop() {
		var err error
		if res, err = TurnOverhead(b.Context(), TurnOverheadConfig{}.withDefaults(benchQuick())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(res.WallRatio, "wall-ratio")
	b.ReportMetric(res.CPURatio, "cpu-ratio")
	b.ReportMetric(res.AllocRatio, "alloc-ratio")
	b.ReportMetric(res.RuntimeWallMicros, "runtime-µs/turn")
	b.ReportMetric(res.BareWallMicros, "bare-µs/turn")
	b.ReportMetric(res.RuntimeAllocs-res.BareAllocs, "extra-allocs/turn")
}

// BenchmarkFanOut: turn time with 1, 4, 16 and 64 parallel tool calls per
// reply, relative to one call.
func BenchmarkFanOut(b *testing.B) {
	var res *FanOutResult
	for b.Loop() {
		var err error
		if res, err = FanOut(b.Context(), FanOutConfig{}.withDefaults(benchQuick())); err != nil {
			b.Fatal(err)
		}
	}
	for _, row := range res.Rows {
		b.ReportMetric(row.Ratio, "ratio-"+itoa(row.Calls)+"-calls")
	}
}

// BenchmarkSessions: 1,000 and 10,000 concurrent sessions.
func BenchmarkSessions(b *testing.B) {
	var res *SessionsResult
	for b.Loop() {
		var err error
		if res, err = Sessions(b.Context(), SessionsConfig{}.withDefaults(benchQuick())); err != nil {
			b.Fatal(err)
		}
	}
	for _, row := range res.Rows {
		n := itoa(row.Sessions)
		b.ReportMetric(row.TurnsPerSecond, "turns/s-"+n)
		b.ReportMetric(row.P50Millis, "p50-ms-"+n)
		b.ReportMetric(row.P99Millis, "p99-ms-"+n)
		b.ReportMetric(float64(row.PeakRSS)/(1<<20), "peak-rss-MiB-"+n)
		b.ReportMetric(row.RSSPerIdleSession, "rss-B/idle-session-"+n)
		b.ReportMetric(row.HeapPerIdleSession, "heap-B/idle-session-"+n)
		b.ReportMetric(row.OfferedTurnsPerSecond, "offered-turns/s-"+n)
		b.ReportMetric(row.OfferedAchievedTurnsPerSecond, "achieved-turns/s-"+n)
		b.ReportMetric(row.OfferedP50Millis, "offered-p50-ms-"+n)
		b.ReportMetric(row.OfferedP99Millis, "offered-p99-ms-"+n)
	}
}

// BenchmarkJournal: appends/s with sync and batch durability.
func BenchmarkJournal(b *testing.B) {
	var res *JournalResult
	for b.Loop() {
		var err error
		if res, err = Journal(b.Context(), JournalConfig{Dir: b.TempDir()}.withDefaults(benchQuick())); err != nil {
			b.Fatal(err)
		}
	}
	for _, row := range res.Rows {
		b.ReportMetric(row.AppendsPerSecond, "appends/s-"+row.Durability)
	}
	b.ReportMetric(res.BatchOverSync, "batch/sync")
}

// BenchmarkRetrieval: queries over 100,000 generated pages (10,000 with
// -short).
func BenchmarkRetrieval(b *testing.B) {
	var res *RetrievalResult
	for b.Loop() {
		var err error
		if res, err = Retrieval(b.Context(), RetrievalConfig{Dir: b.TempDir()}.withDefaults(benchQuick())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(res.P50Millis, "p50-ms")
	b.ReportMetric(res.P99Millis, "p99-ms")
	b.ReportMetric(res.SpeedUp, "speed-up-vs-exhaustive")
	b.ReportMetric(res.TopOverlap, "top-overlap")
	b.ReportMetric(float64(res.IndexBytes)/(1<<20), "index-MiB")
}

// BenchmarkRecovery: restart and resume 1,000 sessions (200 with -short).
func BenchmarkRecovery(b *testing.B) {
	var res *RecoveryResult
	for b.Loop() {
		var err error
		if res, err = Recovery(b.Context(), RecoveryConfig{Dir: b.TempDir()}.withDefaults(benchQuick())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(res.RecoveryMillis, "recovery-ms")
	b.ReportMetric(res.BaselineMillis, "baseline-ms")
	b.ReportMetric(res.Ratio, "ratio")
	b.ReportMetric(res.SessionsPerSecond, "sessions/s")
}

// idleHeapProfiles names the directory BenchmarkIdleSessions and
// BenchmarkIdleSessions_InMemory write their heap profiles to, one per
// runtime, phase and session count: before the sessions are opened
// (*-baseline) and while they are idle, so that `go tool pprof
// -diff_base` shows what the sessions hold (-test.memprofile is written
// after the runtimes have shut down). Set -test.memprofilerate low
// (4096) for a fine attribution.
var idleHeapProfiles = flag.String("idle.heapprofiles", "", "write heap profiles of idle sessions into this directory")

// idleProfiler returns an IdleConfig.atIdle that writes a heap profile
// named after kind into *idleHeapProfiles, or nil when the flag is not set.
func idleProfiler(b *testing.B, kind string) func(phase string, n int) {
	if *idleHeapProfiles == "" {
		return nil
	}
	return func(phase string, n int) {
		name := filepath.Join(*idleHeapProfiles, "idle-"+kind+"-"+phase+"-"+itoa(n)+".pb.gz")
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		b.Logf("heap profile of %d %s idle sessions (%s): %s", n, phase, kind, name)
	}
}

// BenchmarkIdleSessions: RSS and heap per idle session with a 10-message
// history and the journal on disk, resident and passivated.
func BenchmarkIdleSessions(b *testing.B) {
	var res *IdleResult
	for b.Loop() {
		cfg := IdleConfig{Dir: b.TempDir(), atIdle: idleProfiler(b, "disk")}.withDefaults(benchQuick())
		var err error
		if res, err = IdleSessions(b.Context(), cfg); err != nil {
			b.Fatal(err)
		}
	}
	for _, row := range res.Rows {
		n := itoa(row.Sessions)
		b.ReportMetric(row.Live.RSSPerSession, "live-rss-B/session-"+n)
		b.ReportMetric(row.Live.HeapPerSession, "live-heap-B/session-"+n)
		b.ReportMetric(row.Live.FileRSSPerSession, "live-file-rss-B/session-"+n)
		b.ReportMetric(row.Passivated.RSSPerSession, "passivated-rss-B/session-"+n)
		b.ReportMetric(row.Passivated.FileRSSPerSession, "passivated-file-rss-B/session-"+n)
		b.ReportMetric(row.Passivated.HeapPerSession, "passivated-heap-B/session-"+n)
		b.ReportMetric(row.PassivationMillis, "passivation-ms-"+n)
		b.ReportMetric(row.ReactivatedP50Millis, "reactivated-p50-ms-"+n)
	}
}

// BenchmarkIdleSessions_InMemory: the live side of BenchmarkIdleSessions
// on an actors.NewInMemory runtime, whose store keeps the journal in
// memory, to set beside the journal on disk (with -idle.heapprofiles).
func BenchmarkIdleSessions_InMemory(b *testing.B) {
	cfg := IdleConfig{atIdle: idleProfiler(b, "inmemory")}.withDefaults(benchQuick())
	model, err := scripted.New(noteScript(), scripted.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rows := make(map[int]IdleMemory)
	for b.Loop() {
		for _, n := range cfg.Counts {
			rt, err := actors.NewInMemory(actors.Config{Provider: model, IdleTimeout: -1, Compaction: actors.Compaction{Disabled: true}})
			if err != nil {
				b.Fatal(err)
			}
			run, err := idleMeasure(b.Context(), rt, n, cfg, false)
			if serr := rt.Shutdown(b.Context()); err == nil {
				err = serr
			}
			if err != nil {
				b.Fatal(err)
			}
			rows[n] = run.mem
		}
	}
	for n, m := range rows {
		b.ReportMetric(m.RSSPerSession, "live-rss-B/session-"+itoa(n))
		b.ReportMetric(m.HeapPerSession, "live-heap-B/session-"+itoa(n))
	}
}
