package benchsuite

import (
	"slices"
	"testing"
	"time"
)

// TestIdleSessions_Plumbing runs the idle-sessions workload on a few
// sessions and checks what its figures stand for: every actor resident in
// the live run, none in the passivated one, the passivated sessions
// holding less heap than resident ones, and every sampled session
// answering a turn after passivation.
func TestIdleSessions_Plumbing(t *testing.T) {
	counts := []int{8, 24}
	var phases []string
	cfg := IdleConfig{Dir: t.TempDir(), Counts: counts, IdleTimeout: 20 * time.Millisecond, Workers: 4, Reactivated: 5, Quiet: -1,
		atIdle: func(phase string, n int) { phases = append(phases, phase+"/"+itoa(n)) }}
	res, err := IdleSessions(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.TurnsPerSession != 5 || res.MessagesPerSession != 10 || res.IdleTimeoutMillis != 20 || res.QuietSeconds != 0 || len(res.Rows) != len(counts) {
		t.Fatalf("result: %+v", res)
	}
	if want := []string{"live-baseline/8", "live/8", "passivated-baseline/8", "passivated/8",
		"live-baseline/24", "live/24", "passivated-baseline/24", "passivated/24"}; !slices.Equal(phases, want) {
		t.Errorf("memory read at %v, want %v", phases, want)
	}
	for i, r := range res.Rows {
		if r.Sessions != counts[i] {
			t.Errorf("row %d: %d sessions, want %d", i, r.Sessions, counts[i])
		}
		// The warm-up session stays resident beside the measured ones.
		if r.Live.Active != r.Sessions+1 {
			t.Errorf("%d sessions: %d active in the live run, want %d", r.Sessions, r.Live.Active, r.Sessions+1)
		}
		if r.Passivated.Active != 0 {
			t.Errorf("%d sessions: %d active after passivation, want 0", r.Sessions, r.Passivated.Active)
		}
		if !(r.Live.HeapPerSession > 0) || !(r.Passivated.HeapPerSession < r.Live.HeapPerSession) {
			t.Errorf("%d sessions: heap per session %.0f B live, %.0f B passivated; want passivated below live",
				r.Sessions, r.Live.HeapPerSession, r.Passivated.HeapPerSession)
		}
		if want := min(5, r.Sessions); r.Reactivated != want || !(r.ReactivatedP50Millis > 0) {
			t.Errorf("%d sessions: %d reactivated (p50 %v ms), want %d", r.Sessions, r.Reactivated, r.ReactivatedP50Millis, want)
		}
		if !(r.PassivationMillis > 0) {
			t.Errorf("%d sessions: passivation took %v ms", r.Sessions, r.PassivationMillis)
		}
	}
	tab := res.Table()
	if len(tab.Rows) != len(counts) || len(tab.Rows[0]) != len(tab.Columns) {
		t.Errorf("table: %d rows of %d cells for %d columns", len(tab.Rows), len(tab.Rows[0]), len(tab.Columns))
	}
}

// TestRSSFile: the file-backed part of the RSS is read, and is a part of
// it (the test binary's own code is a mapped file).
func TestRSSFile(t *testing.T) {
	total := rss()
	if total == 0 {
		t.Skip("/proc/self/status has no VmRSS on this system")
	}
	if f := rssFile(); f == 0 || f > total {
		t.Errorf("RssFile %d B, want above 0 and at most VmRSS %d B", f, total)
	}
}
