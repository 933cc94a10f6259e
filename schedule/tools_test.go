package schedule_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agcore/agcore/schedule"
	"github.com/agcore/agcore/toolsys"
)

// toolRegistry returns a registry in the given permission mode holding the
// schedule tools over s.
func toolRegistry(t *testing.T, s *schedule.Store, mode toolsys.Mode, cfg schedule.ToolsConfig) *toolsys.Registry {
	t.Helper()
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
	if err := schedule.RegisterTools(reg, s, cfg); err != nil {
		t.Fatal(err)
	}
	return reg
}

func call(t *testing.T, reg *toolsys.Registry, session, name, args string) toolsys.Result {
	t.Helper()
	res, err := reg.Call(t.Context(), name, json.RawMessage(args), &toolsys.Context{SessionID: session, CallID: "c1"})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestTools_SourceAndPermission(t *testing.T) {
	s, _ := newStore(t)
	reg := toolRegistry(t, s, toolsys.ModeBypass, schedule.ToolsConfig{})
	want := map[string]toolsys.Permission{
		schedule.CreateToolName: toolsys.PermWrite,
		schedule.DeleteToolName: toolsys.PermWrite,
		schedule.ListToolName:   toolsys.PermReadOnly,
	}
	for name, perm := range want {
		info, ok := reg.Info(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		if info.Source != toolsys.SourceSchedule || info.Tool.Permission() != perm {
			t.Errorf("%s: source %s, permission %s; want schedule, %s", name, info.Source, info.Tool.Permission(), perm)
		}
	}
}

// TestTools_PermissionPipeline: schedule_create and schedule_delete go
// through the registry's permission pipeline: in read-only mode they are
// refused and nothing is created or deleted.
func TestTools_PermissionPipeline(t *testing.T) {
	s, _ := newStore(t)
	ro := toolRegistry(t, s, toolsys.ModeReadOnly, schedule.ToolsConfig{})
	res := call(t, ro, "chat", schedule.CreateToolName, `{"expr":"@daily","prompt":"follow up"}`)
	if !res.IsError {
		t.Fatalf("schedule_create ran in read-only mode: %+v", res)
	}
	if list, _ := s.List(t.Context()); len(list) != 0 {
		t.Fatalf("a refused schedule_create stored %+v", list)
	}
	if _, err := s.Create(t.Context(), "mine", schedule.Spec{Expr: "@daily", Prompt: "p", Session: "chat"}, "session:chat"); err != nil {
		t.Fatal(err)
	}
	if res := call(t, ro, "chat", schedule.DeleteToolName, `{"id":"mine"}`); !res.IsError {
		t.Fatalf("schedule_delete ran in read-only mode: %+v", res)
	}
	if _, err := s.Get(t.Context(), "mine"); err != nil {
		t.Errorf("a refused schedule_delete deleted the schedule: %v", err)
	}
	if res := call(t, ro, "chat", schedule.ListToolName, `{}`); res.IsError || !strings.Contains(res.Content, "mine") {
		t.Errorf("schedule_list in read-only mode: %+v", res)
	}
}

// TestTools_OwnSchedulesOnly: a session creates schedules that run in it,
// on its own agent, and sees and deletes only its own.
func TestTools_OwnSchedulesOnly(t *testing.T) {
	s, _ := newStore(t)
	reg := toolRegistry(t, s, toolsys.ModeBypass, schedule.ToolsConfig{})
	res := call(t, reg, "alice", schedule.CreateToolName, `{"expr":"0 9 * * 1-5","prompt":"standup notes","time_zone":"UTC","max_runs":3}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	id := res.Metadata["schedule"].(string)
	sc, err := s.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Session != "alice" || sc.CreatedBy != "session:alice" || sc.MaxRuns != 3 || sc.Agent != "" {
		t.Errorf("created %+v", sc)
	}
	res = call(t, reg, "alice", schedule.CreateToolName, `{"expr":"@daily","prompt":"digest","overlap":"queue","missed":"run-once"}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	second, _ := s.Get(t.Context(), res.Metadata["schedule"].(string))
	if second.Session != "alice" || second.Overlap != schedule.OverlapQueue || second.Missed != schedule.MissedRunOnce {
		t.Errorf("second schedule %+v", second)
	}
	// Neither another session nor another agent can be named.
	for _, args := range []string{`{"expr":"@daily","prompt":"p","session":"bob"}`, `{"expr":"@daily","prompt":"p","agent":"admin"}`,
		`{"expr":"@daily","prompt":"p","fresh_session":true}`} {
		if res := call(t, reg, "alice", schedule.CreateToolName, args); !res.IsError {
			t.Errorf("%s was accepted: %+v", args, res)
		}
	}

	if res := call(t, reg, "bob", schedule.ListToolName, `{}`); res.IsError || strings.Contains(res.Content, id) {
		t.Errorf("bob sees alice's schedule: %+v", res)
	}
	if res := call(t, reg, "bob", schedule.DeleteToolName, `{"id":"`+id+`"}`); !res.IsError {
		t.Errorf("bob deleted alice's schedule: %+v", res)
	}
	if _, err := s.Get(t.Context(), id); err != nil {
		t.Fatalf("alice's schedule is gone: %v", err)
	}
	if res := call(t, reg, "alice", schedule.DeleteToolName, `{"id":"`+id+`"}`); res.IsError {
		t.Fatalf("alice cannot delete her schedule: %s", res.Content)
	}
	if _, err := s.Get(t.Context(), id); err == nil {
		t.Error("the deleted schedule is still there")
	}
}

// TestTools_Bounds: agents cannot schedule more often than MinInterval or
// hold more than MaxPerSession active schedules, and a malformed
// expression is an error result naming the field.
func TestTools_Bounds(t *testing.T) {
	s, _ := newStore(t)
	reg := toolRegistry(t, s, toolsys.ModeBypass, schedule.ToolsConfig{MaxPerSession: 2})
	for _, tt := range []struct{ args, want string }{
		{`{"expr":"@every 10s","prompt":"spin"}`, "at most every 1m0s"},
		{`{"expr":"61 * * * *","prompt":"p"}`, "expr"},
		{`{"expr":"@daily","prompt":"p","time_zone":"Nowhere"}`, "time_zone"},
		{`{"expr":"@daily","prompt":"p","end_at":"tomorrow"}`, "end_at"},
		{`{"expr":"@daily","prompt":"p","overlap":"parallel"}`, "overlap"},
	} {
		res := call(t, reg, "s", schedule.CreateToolName, tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("%s: %+v, want an error naming %q", tt.args, res, tt.want)
		}
	}
	for range 2 {
		if res := call(t, reg, "s", schedule.CreateToolName, `{"expr":"@hourly","prompt":"p"}`); res.IsError {
			t.Fatal(res.Content)
		}
	}
	if res := call(t, reg, "s", schedule.CreateToolName, `{"expr":"@hourly","prompt":"p"}`); !res.IsError || !strings.Contains(res.Content, "2 active schedules") {
		t.Errorf("a third schedule: %+v", res)
	}
	if list, _ := s.List(t.Context()); len(list) != 2 {
		t.Errorf("%d schedules stored, want 2", len(list))
	}
}
