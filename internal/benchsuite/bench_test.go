package benchsuite

import "testing"

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
