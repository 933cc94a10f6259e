package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/schedule"
	"github.com/agcore/agcore/toolsys"
)

func TestParse_Schedules(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte("schedules:\n  disabled: true\n  tools: true\n  min_interval: 5m\n  max_per_session: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Schedules{Disabled: true, Tools: true, MinInterval: 5 * time.Minute, MaxPerSession: 3}
	if cfg.Schedules != want {
		t.Errorf("schedules = %+v, want %+v", cfg.Schedules, want)
	}
	for yaml, problem := range map[string]string{
		"schedules:\n  min_interval: -1m\n":   "agcore.yaml:2: schedules.min_interval: must not be negative, got -1m0s",
		"schedules:\n  max_per_session: -2\n": "agcore.yaml:2: schedules.max_per_session: must not be negative, got -2",
		"schedules:\n  enabled: true\n":       "agcore.yaml:2: schedules.enabled: unknown key",
	} {
		_, err := Parse("agcore.yaml", []byte(yaml))
		var ce *Error
		if !errors.As(err, &ce) || !strings.HasPrefix(ce.Problems[0].String(), problem) {
			t.Errorf("Parse(%q) = %v, want %s", yaml, err, problem)
		}
	}
	ex, err := Load(filepath.Join("..", "..", "docs", "agcore.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Schedules{MinInterval: schedule.DefaultMinInterval, MaxPerSession: schedule.DefaultMaxPerSession}); ex.Schedules != want {
		t.Errorf("the example's schedules = %+v, want the defaults %+v", ex.Schedules, want)
	}
}

// TestBuild_Schedules: only a build for the scheduler (agcore serve) gives
// the runtime the schedules to fire; schedules.disabled turns that off;
// schedules.tools registers the agents' tools, with source schedule.
func TestBuild_Schedules(t *testing.T) {
	tests := []struct {
		name              string
		scheduler, tools  bool
		disabled          bool
		wantFire, wantReg bool
	}{
		{"run", false, false, false, false, false},
		{"serve", true, false, false, true, false},
		{"serve, disabled", true, false, true, false, false},
		{"run with tools", false, true, false, false, true},
		{"serve with tools", true, true, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			cfg.DataDir = t.TempDir()
			cfg.Workspace = t.TempDir()
			cfg.Schedules = Schedules{Tools: tt.tools, Disabled: tt.disabled}
			built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true, Scheduler: tt.scheduler})
			if err != nil {
				t.Fatal(err)
			}
			defer built.Close()
			if got := built.Runtime.Schedules != nil; got != tt.wantFire {
				t.Errorf("the runtime fires schedules: %v, want %v", got, tt.wantFire)
			}
			info, ok := built.Tools.Info(schedule.CreateToolName)
			if ok != tt.wantReg {
				t.Fatalf("schedule_create registered: %v, want %v", ok, tt.wantReg)
			}
			if ok && (info.Source != toolsys.SourceSchedule || len(built.Tools.ListBySource(toolsys.SourceSchedule)) != 3) {
				t.Errorf("schedule tools: source %s, %d of them", info.Source, len(built.Tools.ListBySource(toolsys.SourceSchedule)))
			}
			if got := built.Schedules != nil; got != (tt.scheduler || tt.tools) {
				t.Errorf("Built.Schedules set: %v, want %v", got, tt.scheduler || tt.tools)
			}
			if built.Schedules != nil && (built.Runtime.Store == nil || built.Runtime.DataDir != "") {
				t.Error("the schedules and the runtime do not share the opened store")
			}
		})
	}
}
