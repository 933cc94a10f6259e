package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/schedule"
)

// newSchedules returns a schedule store on an in-memory store of its own.
func newSchedules(t testing.TB) *schedule.Store {
	t.Helper()
	mem, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	return schedule.New(mem, schedule.Options{})
}

// withSchedules gives the server the schedules of store.
func withSchedules(store *schedule.Store) func(*httpapi.Config) {
	return func(c *httpapi.Config) { c.Schedules = store }
}

// checkScheduleRoutes exercises every schedule route, successes and
// errors, against the document.
func checkScheduleRoutes(t *testing.T, c *conformance, store *schedule.Store) {
	t.Helper()
	const one = "GET /v1/schedules/{schedule_id}"
	c.check("POST /v1/schedules", 201, "POST", "/v1/schedules", `{"id":"nightly","expr":"0 3 * * *","prompt":"report","session":"s2","max_runs":5}`)
	c.check("GET /v1/schedules", 200, "GET", "/v1/schedules", "")
	// A fire, so that the schedule shows one.
	sc, err := store.Get(t.Context(), "nightly")
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := store.Fire(t.Context(), "nightly", sc.NextFire, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Finish(t.Context(), "nightly", f.N, sc.NextFire.Add(time.Second), "failed", "model down"); err != nil {
		t.Fatal(err)
	}
	if body := c.check(one, 200, "GET", "/v1/schedules/nightly", ""); !strings.Contains(string(body), `"outcome":"failed"`) {
		t.Errorf("the schedule does not show its fire: %s", body)
	}
	c.check("PUT /v1/schedules/{schedule_id}", 200, "PUT", "/v1/schedules/nightly", `{"expr":"@daily","prompt":"report","overlap":"queue"}`)
	for _, tc := range []struct {
		op, method, path, body string
		status                 int
	}{
		{"POST /v1/schedules", "POST", "/v1/schedules", `{"expr":"@daily"}`, 400},
		{"POST /v1/schedules", "POST", "/v1/schedules", `{"expr":"@daily","prompt":"p","every":"day"}`, 400},
		{"POST /v1/schedules", "POST", "/v1/schedules", `{"id":"nightly","expr":"@daily","prompt":"p"}`, 409},
		{"PUT /v1/schedules/{schedule_id}", "PUT", "/v1/schedules/nightly", `{"expr":"@daily","prompt":"p","missed":"later"}`, 400},
		{"PUT /v1/schedules/{schedule_id}", "PUT", "/v1/schedules/nope", `{"expr":"@daily","prompt":"p"}`, 404},
		{one, "GET", "/v1/schedules/nope", "", 404},
		{one, "GET", "/v1/schedules/not.an.id", "", 404},
		{"DELETE /v1/schedules/{schedule_id}", "DELETE", "/v1/schedules/nightly", "", 204},
		{"DELETE /v1/schedules/{schedule_id}", "DELETE", "/v1/schedules/nightly", "", 404},
	} {
		c.check(tc.op, tc.status, tc.method, tc.path, tc.body)
	}
}

// TestSchedulesAPI: the schedule routes create, list, show, change and
// delete the schedules of the store, and refuse a malformed schedule with
// a message that names the field.
func TestSchedulesAPI(t *testing.T) {
	store := newSchedules(t)
	e := newEnv(t, envOptions{script: exploreScript(), config: withSchedules(store)})
	resp, body := e.do("POST", "/v1/schedules", `{"id":"rep","expr":"*/15 * * * *","prompt":"check","time_zone":"UTC","agent":"default"}`)
	if resp.StatusCode != 201 || resp.Header.Get("Location") != "/v1/schedules/rep" {
		t.Fatalf("create: %d %s (Location %q)", resp.StatusCode, body, resp.Header.Get("Location"))
	}
	var got httpapi.Schedule
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.State != "active" || got.Missed != "skip" || got.Overlap != "skip" || got.CreatedBy != "http" || got.NextFire.IsZero() {
		t.Errorf("created %+v", got)
	}
	if _, err := store.Get(t.Context(), "rep"); err != nil {
		t.Errorf("the store lacks the schedule: %v", err)
	}
	for body, field := range map[string]string{
		`{"expr":"61 * * * *","prompt":"p"}`:                  "expr",
		`{"expr":"@every 1ms","prompt":"p"}`:                  "expr",
		`{"expr":"@daily","prompt":"p","time_zone":"Mars/X"}`: "time_zone",
		`{"expr":"@daily","prompt":"  "}`:                     "prompt",
		`{"expr":"@daily","prompt":"p","end_at":"soon"}`:      "end_at",
		`{"expr":"@daily","prompt":"p","agent":"ghost"}`:      "agent",
		`{"expr":"@daily","prompt":"p","session":"a/b"}`:      "session",
		`{"id":"a b","expr":"@daily","prompt":"p"}`:           "id",
	} {
		resp, out := e.do("POST", "/v1/schedules", body)
		if resp.StatusCode != 400 || !strings.Contains(string(out), field) || !strings.Contains(string(out), `"code":"bad_request"`) {
			t.Errorf("%s: %d %s, want a 400 naming %s", body, resp.StatusCode, out, field)
		}
	}
	if list, _ := store.List(t.Context()); len(list) != 1 {
		t.Errorf("refused schedules were stored: %d schedules", len(list))
	}
	if resp, out := e.do("PUT", "/v1/schedules/rep", `{"id":"other","expr":"@daily","prompt":"p"}`); resp.StatusCode != 400 {
		t.Errorf("PUT with another id: %d %s", resp.StatusCode, out)
	}
	if resp, _ := e.do("DELETE", "/v1/schedules/rep", ""); resp.StatusCode != 204 {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	if _, err := store.Get(t.Context(), "rep"); err == nil {
		t.Error("the deleted schedule is still stored")
	}
	evs, _ := store.Events(t.Context(), "rep")
	if len(evs) != 2 || evs[0].Type != schedule.EventCreated || evs[1].Type != schedule.EventDeleted {
		t.Errorf("journal %+v", evs)
	}
}

// TestSchedulesAPI_NoStore: a server without schedules answers 404.
func TestSchedulesAPI_NoStore(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript()})
	for _, r := range [][2]string{{"GET", "/v1/schedules"}, {"GET", "/v1/schedules/x"}, {"DELETE", "/v1/schedules/x"}} {
		if resp, body := e.do(r[0], r[1], ""); resp.StatusCode != 404 || !strings.Contains(string(body), `"code":"not_found"`) {
			t.Errorf("%s %s: %d %s", r[0], r[1], resp.StatusCode, body)
		}
	}
}
