package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/schedule"
)

// openSchedules opens the schedules of dataDir with the given clock (nil:
// the wall clock); the caller closes the store.
func openSchedules(t *testing.T, dataDir string, clock func() time.Time) (*memory.Store, *schedule.Store) {
	t.Helper()
	mem, err := memory.Open(memory.Options{Dir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	return mem, schedule.New(mem, schedule.Options{Clock: clock})
}

func TestSchedule_AddListRm(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", data, "schedule", "add", "--id", "nightly",
		"--cron", "0 3 * * *", "--tz", "UTC", "--prompt", "Write the nightly report", "--session", "reports",
		"--max-runs", "30", "--missed", "run-once", "--overlap", "queue")
	if code != exitOK || !strings.HasPrefix(stdout, "scheduled nightly: next run ") || !strings.Contains(stdout, "T03:00:00Z (session reports)") {
		t.Fatalf("add: %d %q %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t.Context(), t, nil, "--data-dir", data, "schedule", "list")
	// nightly 0 3 * * * UTC <next> 0/30 reports Write the nightly report
	if fields := strings.Fields(lineOf(stdout, "nightly ")); code != exitOK || len(fields) < 10 ||
		fields[6] != "UTC" || fields[8] != "0/30" || fields[9] != "reports" {
		t.Errorf("list: %d %q", code, stdout)
	}
	code, stdout, _ = runCLI(t.Context(), t, nil, "--data-dir", data, "schedule", "list", "--json")
	var sc schedule.Schedule
	if err := json.Unmarshal([]byte(stdout), &sc); code != exitOK || err != nil || sc.ID != "nightly" ||
		sc.Missed != schedule.MissedRunOnce || sc.Overlap != schedule.OverlapQueue || sc.CreatedBy != "cli" {
		t.Errorf("list --json: %d %v %+v", code, err, sc)
	}
	if code, _, stderr := runCLI(t.Context(), t, nil, "--data-dir", data, "schedule", "add", "--id", "nightly",
		"--cron", "@daily", "--prompt", "again"); code != exitError || !strings.Contains(stderr, "--id") {
		t.Errorf("add of a taken id: %d %q", code, stderr)
	}
	if code, stdout, _ := runCLI(t.Context(), t, nil, "--data-dir", data, "schedule", "rm", "nightly"); code != exitOK || stdout != "removed nightly\n" {
		t.Errorf("rm: %d %q", code, stdout)
	}
	if code, _, stderr := runCLI(t.Context(), t, nil, "--data-dir", data, "schedule", "rm", "nightly"); code != exitError || !strings.Contains(stderr, `no schedule "nightly"`) {
		t.Errorf("rm again: %d %q", code, stderr)
	}
	mem, store := openSchedules(t, data, nil)
	defer mem.Close()
	evs, _ := store.Events(t.Context(), "nightly")
	if len(evs) != 2 || evs[0].Type != schedule.EventCreated || evs[1].Type != schedule.EventDeleted {
		t.Errorf("journal %+v", evs)
	}
}

// TestSchedule_AddRefusesNamingTheFlag: a malformed schedule is refused
// with exit code 2, naming the flag, and nothing is stored.
func TestSchedule_AddRefusesNamingTheFlag(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for _, tt := range []struct {
		args []string
		flag string
	}{
		{[]string{"--cron", "0 61 * * *", "--prompt", "p"}, "--cron"},
		{[]string{"--cron", "every day", "--prompt", "p"}, "--cron"},
		{[]string{"--cron", "@every 100ms", "--prompt", "p"}, "--cron"},
		{[]string{"--cron", "@daily"}, "--prompt"},
		{[]string{"--cron", "@daily", "--prompt", "p", "--tz", "Atlantis/Capital"}, "--tz"},
		{[]string{"--cron", "@daily", "--prompt", "p", "--until", "2000-01-01T00:00:00Z"}, "--until"},
		{[]string{"--cron", "@daily", "--prompt", "p", "--until", "next week"}, "--until"},
		{[]string{"--cron", "@daily", "--prompt", "p", "--missed", "catch-up"}, "--missed"},
		{[]string{"--cron", "@daily", "--prompt", "p", "--overlap", "both"}, "--overlap"},
		{[]string{"--cron", "@daily", "--prompt", "p", "--max-runs", "-1"}, "--max-runs"},
		{[]string{"--cron", "@daily", "--prompt", "p", "--agent", "ghost"}, "--agent"},
		{[]string{"--cron", "@daily", "--prompt", "p", "--id", "no spaces"}, "--id"},
	} {
		code, _, stderr := runCLI(t.Context(), t, nil, append([]string{"--data-dir", data, "schedule", "add"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.flag+":") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", tt.args, code, stderr, tt.flag)
		}
	}
	// The message the README shows.
	if _, _, stderr := runCLI(t.Context(), t, nil, "--data-dir", data, "schedule", "add", "--cron", "0 61 * * *", "--prompt", "p"); !strings.Contains(stderr,
		`--cron: "0 61 * * *": end of range (61) above maximum (23): 61`) {
		t.Errorf("stderr %q", stderr)
	}
	if code, stdout, _ := runCLI(t.Context(), t, nil, "--data-dir", data, "schedule", "list"); code == exitOK && !strings.HasPrefix(stdout, "no schedules") {
		t.Errorf("refused schedules were stored: %q", stdout)
	}
}

// TestSchedule_DataDirInUse: while another process (here, an open store)
// holds the data directory, the CLI says to use the API.
func TestSchedule_DataDirInUse(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	mem, _ := openSchedules(t, data, nil)
	defer mem.Close()
	code, _, stderr := runCLI(t.Context(), t, nil, "--data-dir", data, "schedule", "list")
	if code != exitError || !strings.Contains(stderr, "/v1/schedules") {
		t.Errorf("schedule list on a data directory in use: %d %q", code, stderr)
	}
}

// TestRun_DoesNotFireSchedules: agcore run leaves a due schedule alone.
func TestRun_DoesNotFireSchedules(t *testing.T) {
	cfg := writeConfig(t, "data_dir: data\nworkspace: .\ndefault_model: mock/scripted\nproviders:\n  - {name: mock, type: scripted}\n", nil)
	data := filepath.Join(filepath.Dir(cfg), "data")
	past := time.Now().Add(-48 * time.Hour)
	mem, store := openSchedules(t, data, func() time.Time { return past })
	if _, err := store.Create(t.Context(), "due", schedule.Spec{Expr: "@hourly", Prompt: "scheduled prompt", Session: "target",
		Missed: schedule.MissedRunOnce}, "test"); err != nil {
		t.Fatal(err)
	}
	if err := mem.Close(); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "run", "hello"); code != exitOK {
		t.Fatalf("run: %d %s", code, stderr)
	}
	mem, store = openSchedules(t, data, nil)
	defer mem.Close()
	sc, err := store.Get(t.Context(), "due")
	if err != nil {
		t.Fatal(err)
	}
	if evs, _ := store.Events(t.Context(), "due"); sc.Runs != 0 || len(evs) != 1 {
		t.Errorf("run fired the schedule: %d runs, journal %+v", sc.Runs, evs)
	}
}

// TestServe_FiresSchedules: a schedule created through serve's API runs
// its prompt in its session at its fire time, and the API shows the fire.
func TestServe_FiresSchedules(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The demo model writes a file: accept-edits runs it without approval.
	url, done := startServe(t, ctx, "--permission-mode", "accept-edits")
	if code, body := request(t, "POST", url+"/v1/sessions", "", `{"id":"night"}`); code != http.StatusCreated {
		t.Fatalf("create session: %d %s", code, body)
	}
	req, err := http.NewRequestWithContext(ctx, "GET", url+"/v1/sessions/night/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if code, body := request(t, "POST", url+"/v1/schedules", "",
		`{"id":"tick","expr":"@every 1s","prompt":"What is this project?","session":"night","max_runs":1}`); code != http.StatusCreated {
		t.Fatalf("create schedule: %d %s", code, body)
	}
	var events []string
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, ev)
			if ev == "turn_ended" {
				break
			}
		}
	}
	if len(events) == 0 || events[0] != "turn_started" || events[len(events)-1] != "turn_ended" {
		t.Fatalf("the session's events: %v", events)
	}
	code, body := request(t, "GET", url+"/v1/schedules/tick", "", "")
	var got struct {
		State string `json:"state"`
		Runs  int    `json:"runs"`
		Fires []struct {
			Session string `json:"session"`
			TurnID  string `json:"turn_id"`
		} `json:"fires"`
	}
	if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil {
		t.Fatalf("GET schedule: %d %v %s", code, err, body)
	}
	if got.Runs != 1 || got.State != "ended" || len(got.Fires) != 1 || got.Fires[0].Session != "night" || got.Fires[0].TurnID != "schedule-tick-1" {
		t.Errorf("schedule after its run: %s", body)
	}
	code, body = request(t, "GET", url+"/v1/sessions/night/history", "", "")
	if code != http.StatusOK || strings.Count(body, "What is this project?") != 1 {
		t.Errorf("history: %d %s", code, body)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestToolsList_ScheduleTools: with schedules.tools, tools list shows the
// schedule tools with source schedule.
func TestToolsList_ScheduleTools(t *testing.T) {
	cfg := writeConfig(t, "data_dir: data\nworkspace: .\nschedules:\n  tools: true\n", nil)
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "tools", "list")
	if code != exitOK {
		t.Fatalf("tools list: %d %s", code, stderr)
	}
	for name, perm := range map[string]string{"schedule_create": "write", "schedule_delete": "write", "schedule_list": "read-only"} {
		if fields := strings.Fields(lineOf(stdout, name+" ")); len(fields) < 3 || fields[1] != "schedule" || fields[2] != perm {
			t.Errorf("%s: %v, want source schedule, permission %s", name, fields, perm)
		}
	}
	cfg = writeConfig(t, "data_dir: data\nworkspace: .\n", nil)
	if _, stdout, _ := runCLI(t.Context(), t, nil, "--config", cfg, "tools", "list"); strings.Contains(stdout, "schedule_create") {
		t.Error("the schedule tools are listed without schedules.tools")
	}
}
