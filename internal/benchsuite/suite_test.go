package benchsuite

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// tiny runs every workload in a size that takes a few seconds in all.
func tiny(t *testing.T) Options {
	return Options{
		Dir:          t.TempDir(),
		TurnOverhead: TurnOverheadConfig{Pairs: 20, WarmUp: 4, TurnsPerConversation: 6},
		FanOut:       FanOutConfig{Calls: []int{1, 4, 16}, ToolTime: 2 * time.Millisecond, Rounds: 3, WarmUp: 1},
		Sessions:     SessionsConfig{Counts: []int{20, 100}, TurnsPerSession: 2, BaselineTurns: 5},
		Journal:      JournalConfig{Writers: 4, Phase: 30 * time.Millisecond, Rounds: 2},
		Retrieval:    RetrievalConfig{Pages: 300, Queries: 40, BaselineQueries: 10},
		Recovery:     RecoveryConfig{Sessions: 20, Turns: 2, Workers: 4, Rounds: 2},
		IdleSessions: IdleConfig{Counts: []int{10}, IdleTimeout: 20 * time.Millisecond, Workers: 4, Reactivated: 3, Quiet: -1},
	}
}

func TestRun_Smoke(t *testing.T) {
	rep, err := Run(t.Context(), tiny(t))
	if err != nil {
		t.Fatal(err)
	}
	positive := func(name string, xs ...float64) {
		t.Helper()
		for i, x := range xs {
			if !(x > 0) {
				t.Errorf("%s[%d] = %v, want > 0", name, i, x)
			}
		}
	}
	m := rep.Machine
	if m.GoVersion == "" || m.NumCPU < 1 || m.GOMAXPROCS < 1 || m.Date.IsZero() {
		t.Errorf("machine incomplete: %+v", m)
	}

	to := rep.TurnOverhead
	if to == nil || to.Pairs != 20 || to.RequestsPerTurn != 2 {
		t.Fatalf("turn overhead: %+v", to)
	}
	positive("turn overhead", to.RuntimeWallMicros, to.BareWallMicros, to.WallRatio, to.RuntimeCPUMicros, to.BareCPUMicros,
		to.CPURatio, to.RuntimeAllocs, to.BareAllocs, to.AllocRatio)

	fo := rep.FanOut
	if fo == nil || len(fo.Rows) != 3 || fo.Rows[0].Ratio != 1 {
		t.Fatalf("fan-out: %+v", fo)
	}
	for _, r := range fo.Rows {
		positive("fan-out", r.TurnMillis, r.Ratio)
		if r.TurnMillis < 2 {
			t.Errorf("fan-out %d calls took %v ms, less than one tool call", r.Calls, r.TurnMillis)
		}
	}

	ss := rep.Sessions
	if ss == nil || len(ss.Rows) != 2 {
		t.Fatalf("sessions: %+v", ss)
	}
	for i, r := range ss.Rows {
		if r.Sessions != []int{20, 100}[i] || r.Turns != 2*r.Sessions {
			t.Errorf("sessions row %d: %+v", i, r)
		}
		positive("sessions", r.TurnsPerSecond, r.P50Millis, r.P99Millis, r.UnloadedP50Millis)
		if r.P99Millis < r.P50Millis {
			t.Errorf("sessions p99 %v < p50 %v", r.P99Millis, r.P50Millis)
		}
		positive("sessions at the offered rate", r.OfferedTurnsPerSecond, r.OfferedAchievedTurnsPerSecond, r.OfferedP50Millis, r.OfferedP99Millis)
		if want := 0.8 * r.TurnsPerSecond; r.OfferedTurnsPerSecond != want {
			t.Errorf("sessions offered rate %v, want 80 %% of %v", r.OfferedTurnsPerSecond, r.TurnsPerSecond)
		}
		if r.OfferedP99Millis < r.OfferedP50Millis {
			t.Errorf("sessions p99 %v < p50 %v at the offered rate", r.OfferedP99Millis, r.OfferedP50Millis)
		}
	}

	j := rep.Journal
	if j == nil || len(j.Rows) != 3 || j.Rows[0].Durability != "sync" || j.Rows[1].Durability != "batch" {
		t.Fatalf("journal: %+v", j)
	}
	positive("journal", j.BatchOverSync)
	for _, r := range j.Rows {
		positive("journal "+r.Durability, r.AppendsPerSecond, r.P50Micros, r.P99Micros)
	}

	rt := rep.Retrieval
	if rt == nil || rt.Pages != 300 || rt.Queries != 40 || rt.BaselineQueries != 10 {
		t.Fatalf("retrieval: %+v", rt)
	}
	positive("retrieval", rt.P50Millis, rt.P99Millis, rt.ExhaustiveP50Millis, rt.SpeedUp, rt.TopOverlap, float64(rt.IndexBytes), rt.ImportPagesPerSecond)
	if rt.TopOverlap > 1 {
		t.Errorf("retrieval overlap %v > 1", rt.TopOverlap)
	}

	rc := rep.Recovery
	if rc == nil || rc.Sessions != 20 || rc.Rounds != 2 {
		t.Fatalf("recovery: %+v", rc)
	}
	positive("recovery", rc.RecoveryMillis, rc.BaselineMillis, rc.Ratio, rc.SessionsPerSecond)

	is := rep.IdleSessions
	if is == nil || len(is.Rows) != 1 || is.Rows[0].Sessions != 10 || is.Rows[0].Reactivated != 3 || is.Rows[0].Passivated.Active != 0 {
		t.Fatalf("idle sessions: %+v", is)
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"machine: go1.", "turn overhead", "fan-out", "concurrent sessions", "journal appends", "knowledge retrieval", "recovery after a restart", "idle sessions"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.IdleSessions == nil || back.IdleSessions.Rows[0] != is.Rows[0] {
		t.Errorf("JSON round trip lost the idle-sessions result: %s", js.String())
	}
	if back.Journal == nil || back.Journal.BatchOverSync != j.BatchOverSync {
		t.Errorf("JSON round trip lost the journal result: %s", js.String())
	}
}

func TestRun_Only(t *testing.T) {
	tests := []struct {
		name    string
		only    []string
		wantErr error
	}{
		{"one workload", []string{WorkloadJournal}, nil},
		{"unknown workload", []string{"journal", "warp-drive"}, ErrUnknownWorkload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tiny(t)
			opts.Only = tt.only
			rep, err := Run(t.Context(), opts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if rep.Journal == nil || rep.TurnOverhead != nil || rep.Sessions != nil || rep.Recovery != nil {
				t.Errorf("Only %v ran %+v", tt.only, rep)
			}
			if got := len(rep.Tables()); got != 1 {
				t.Errorf("%d tables, want 1", got)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{nil, 0.5, 0},
		{[]float64{3}, 0.99, 3},
		{[]float64{5, 1, 4, 2, 3}, 0.5, 3},
		{[]float64{5, 1, 4, 2, 3}, 0.99, 5},
		{[]float64{5, 1, 4, 2, 3}, 0, 1},
	}
	for _, tt := range tests {
		if got := percentile(tt.xs, tt.q); got != tt.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tt.xs, tt.q, got, tt.want)
		}
	}
}

func TestParseKB(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"2048 kB", 2048 << 10},
		{"  16 kB", 16 << 10},
		{"lots", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := parseKB(tt.in); got != tt.want {
			t.Errorf("parseKB(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
