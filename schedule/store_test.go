package schedule_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/schedule"
)

func TestStore_Lifecycle(t *testing.T) {
	s, c := newStore(t)
	ctx := t.Context()
	sc, err := s.Create(ctx, "", schedule.Spec{Expr: "@every 10m", Prompt: "check the queue", Session: "ops"}, "cli")
	if err != nil {
		t.Fatal(err)
	}
	if sc.ID != "s1" || sc.State != schedule.StateActive || !sc.NextFire.Equal(t0.Add(10*time.Minute)) || sc.CreatedBy != "cli" {
		t.Fatalf("created %+v", sc)
	}
	if _, err := s.Create(ctx, "s1", schedule.Spec{Expr: "@daily", Prompt: "x"}, "cli"); !errors.Is(err, schedule.ErrExists) {
		t.Errorf("Create of a taken id = %v, want ErrExists", err)
	}
	if _, err := s.Create(ctx, "bad/id", schedule.Spec{Expr: "@daily", Prompt: "x"}, "cli"); fieldOf(err) != "id" {
		t.Errorf("Create of a bad id = %v, want a FieldError on id", err)
	}

	c.set(t0.Add(time.Minute))
	up, err := s.Update(ctx, "s1", schedule.Spec{Expr: "@hourly", Prompt: "check again", Session: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if up.Prompt != "check again" || !up.NextFire.Equal(time.Date(2023, 11, 14, 23, 0, 0, 0, time.UTC)) {
		t.Errorf("updated %+v", up)
	}
	got, err := s.Get(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(up, got); diff != "" {
		t.Errorf("Get (-updated +got):\n%s", diff)
	}
	if err := s.Delete(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "s1"); !errors.Is(err, schedule.ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "s1"); !errors.Is(err, schedule.ErrNotFound) {
		t.Errorf("second Delete = %v, want ErrNotFound", err)
	}
	// The journal outlives the schedule.
	want := []schedule.EventType{schedule.EventCreated, schedule.EventChanged, schedule.EventDeleted}
	if got := eventTypes(t, s, "s1"); !slices.Equal(got, want) {
		t.Errorf("journal %v, want %v", got, want)
	}
	evs, _ := s.Events(ctx, "s1")
	if evs[0].Spec == nil || evs[0].Spec.Prompt != "check the queue" || evs[1].Spec.Prompt != "check again" || evs[0].V != schedule.EventVersion {
		t.Errorf("created and changed events carry the spec: %+v", evs)
	}
	if list, err := s.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("List after Delete = %v, %v", list, err)
	}
}

// TestStore_InvalidSpec: every invalid field is refused, naming it, and
// nothing is stored.
func TestStore_InvalidSpec(t *testing.T) {
	good := schedule.Spec{Expr: "@daily", Prompt: "p"}
	tests := []struct {
		field string
		mod   func(*schedule.Spec)
	}{
		{"expr", func(s *schedule.Spec) { s.Expr = "every day" }},
		{"time_zone", func(s *schedule.Spec) { s.TimeZone = "Nowhere/Town" }},
		{"prompt", func(s *schedule.Spec) { s.Prompt = " \n" }},
		{"max_runs", func(s *schedule.Spec) { s.MaxRuns = -1 }},
		{"missed", func(s *schedule.Spec) { s.Missed = "catch-up" }},
		{"overlap", func(s *schedule.Spec) { s.Overlap = "parallel" }},
		{"end_at", func(s *schedule.Spec) { s.EndAt = t0.Add(-time.Hour) }},
		{"end_at", func(s *schedule.Spec) { s.EndAt = t0.Add(time.Hour) }}, // before the first fire, at midnight
		{"session", func(s *schedule.Spec) { s.Session = "a/b" }},
		{"name", func(s *schedule.Spec) { s.Name = "a\x00b" }},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			s, _ := newStore(t)
			spec := good
			tt.mod(&spec)
			_, err := s.Create(t.Context(), "", spec, "cli")
			if !errors.Is(err, schedule.ErrInvalid) || fieldOf(err) != tt.field {
				t.Fatalf("Create = %v, want a FieldError on %s", err, tt.field)
			}
			if list, _ := s.List(t.Context()); len(list) != 0 {
				t.Errorf("an invalid schedule was stored: %+v", list)
			}
		})
	}
}

// TestStore_FireJournaled: Fire journals the fire, with its session and
// turn id, and advances the schedule, in one step; Start and Finish
// journal the rest of the fire's life.
func TestStore_FireJournaled(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	if _, err := s.Create(ctx, "rep", schedule.Spec{Expr: "@every 10m", Prompt: "report", Overlap: schedule.OverlapQueue}, "cli"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Fire(ctx, "rep", t0.Add(5*time.Minute), false); !errors.Is(err, schedule.ErrNotDue) {
		t.Errorf("Fire before the fire time = %v, want ErrNotDue", err)
	}
	f, sc, err := s.Fire(ctx, "rep", t0.Add(10*time.Minute), false)
	if err != nil {
		t.Fatal(err)
	}
	want := schedule.Fire{ID: "rep-1", Schedule: "rep", N: 1, Due: t0.Add(10 * time.Minute), FiredAt: t0.Add(10 * time.Minute),
		Session: "rep-1", TurnID: "schedule-rep-1", Prompt: "report", Status: schedule.FireRunning}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("fire (-want +got):\n%s", diff)
	}
	if sc.Runs != 1 || !sc.NextFire.Equal(t0.Add(20*time.Minute)) || sc.LastFire != "rep-1" {
		t.Errorf("schedule after the fire: %+v", sc)
	}
	// A queued fire, started later.
	q, _, err := s.Fire(ctx, "rep", t0.Add(20*time.Minute), true)
	if err != nil {
		t.Fatal(err)
	}
	if q.Status != schedule.FireQueued {
		t.Errorf("queued fire status %s", q.Status)
	}
	pending, err := s.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 || pending[0].ID != "rep-1" || pending[1].ID != "rep-2" {
		t.Errorf("Pending = %+v", pending)
	}
	if _, err := s.Finish(ctx, "rep", 1, t0.Add(21*time.Minute), "completed", ""); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Start(ctx, "rep", 2, t0.Add(21*time.Minute)); err != nil || st.Status != schedule.FireRunning {
		t.Errorf("Start = %+v, %v", st, err)
	}
	if _, err := s.Finish(ctx, "rep", 2, t0.Add(22*time.Minute), "failed", "model down"); err != nil {
		t.Fatal(err)
	}
	// Finishing twice records nothing more.
	if _, err := s.Finish(ctx, "rep", 2, t0.Add(23*time.Minute), "completed", ""); err != nil {
		t.Fatal(err)
	}
	if pending, _ := s.Pending(ctx); len(pending) != 0 {
		t.Errorf("Pending after the finishes = %+v", pending)
	}
	fires, _ := s.Fires(ctx, "rep")
	if len(fires) != 2 || fires[1].Outcome != "failed" || fires[1].Reason != "model down" {
		t.Errorf("fires %+v", fires)
	}
	wantEv := []schedule.EventType{schedule.EventCreated, schedule.EventFired, schedule.EventQueued,
		schedule.EventFinished, schedule.EventStarted, schedule.EventFinished}
	if got := eventTypes(t, s, "rep"); !slices.Equal(got, wantEv) {
		t.Errorf("journal %v, want %v", got, wantEv)
	}
}

// TestStore_MaxRunsAndEndDate: a schedule ends after max_runs fires, and
// before a fire time past its end date; an ended schedule cannot fire.
func TestStore_MaxRunsAndEndDate(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	if _, err := s.Create(ctx, "twice", schedule.Spec{Expr: "@every 1m", Prompt: "p", MaxRuns: 2}, "cli"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "until", schedule.Spec{Expr: "@every 1m", Prompt: "p", EndAt: t0.Add(150 * time.Second)}, "cli"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		now := t0.Add(time.Duration(i) * time.Minute)
		for _, id := range []string{"twice", "until"} {
			if _, _, err := s.Fire(ctx, id, now, false); err != nil {
				t.Fatalf("fire %d of %s: %v", i, id, err)
			}
		}
	}
	for id, reason := range map[string]string{"twice": "ran max_runs times", "until": "the end date passed"} {
		sc, _ := s.Get(ctx, id)
		if sc.State != schedule.StateEnded || sc.EndReason != reason || !sc.NextFire.IsZero() || sc.Runs != 2 {
			t.Errorf("%s: %+v, want ended (%s) after 2 runs", id, sc, reason)
		}
		if _, _, err := s.Fire(ctx, id, t0.Add(time.Hour), false); !errors.Is(err, schedule.ErrNotDue) {
			t.Errorf("%s: Fire of an ended schedule = %v, want ErrNotDue", id, err)
		}
		if got := eventTypes(t, s, id); got[len(got)-1] != schedule.EventEnded {
			t.Errorf("%s: journal %v does not end with ended", id, got)
		}
	}
	// Raising max_runs revives it; a max_runs already reached is refused.
	if _, err := s.Update(ctx, "twice", schedule.Spec{Expr: "@every 1m", Prompt: "p", MaxRuns: 2}); fieldOf(err) != "max_runs" {
		t.Errorf("Update to a spent max_runs = %v, want a FieldError on max_runs", err)
	}
	sc, err := s.Update(ctx, "twice", schedule.Spec{Expr: "@every 1m", Prompt: "p", MaxRuns: 3})
	if err != nil || sc.State != schedule.StateActive || sc.Runs != 2 {
		t.Errorf("Update to max_runs 3 = %+v, %v", sc, err)
	}
}

// TestStore_MissedTimesCollapse: after a long downtime, a fire or skip
// moves the schedule to the next fire time after now: the fire times
// missed in a row are not fired one by one.
func TestStore_MissedTimesCollapse(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	for _, id := range []string{"a", "b"} {
		if _, err := s.Create(ctx, id, schedule.Spec{Expr: "@every 10m", Prompt: "p"}, "cli"); err != nil {
			t.Fatal(err)
		}
	}
	later := t0.Add(5*time.Hour + 3*time.Minute)
	_, a, err := s.Fire(ctx, "a", later, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Skip(ctx, "b", later, schedule.ReasonMissed)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []schedule.Schedule{a, b} {
		if !sc.NextFire.Equal(later.Add(10 * time.Minute)) {
			t.Errorf("%s: next fire %s, want %s", sc.ID, sc.NextFire, later.Add(10*time.Minute))
		}
	}
	if _, _, err := s.Fire(ctx, "a", later, false); !errors.Is(err, schedule.ErrNotDue) {
		t.Errorf("a second fire at the same time = %v, want ErrNotDue", err)
	}
	evs, _ := s.Events(ctx, "b")
	if last := evs[len(evs)-1]; last.Type != schedule.EventSkipped || last.Reason != schedule.ReasonMissed || !last.Due.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("skip event %+v", last)
	}
}

// TestStore_Retention: a schedule keeps its last KeepFires fires and
// KeepEvents journal entries.
func TestStore_Retention(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	if _, err := s.Create(ctx, "r", schedule.Spec{Expr: "@every 1s", Prompt: "p"}, "cli"); err != nil {
		t.Fatal(err)
	}
	n := schedule.KeepEvents/2 + 5 // two entries per fire
	for i := 1; i <= n; i++ {
		f, _, err := s.Fire(ctx, "r", t0.Add(time.Duration(i)*time.Second), false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Finish(ctx, "r", f.N, t0.Add(time.Duration(i)*time.Second), "completed", ""); err != nil {
			t.Fatal(err)
		}
	}
	fires, _ := s.Fires(ctx, "r")
	if len(fires) != schedule.KeepFires || fires[0].N != n-schedule.KeepFires+1 {
		t.Errorf("kept %d fires from %d, want %d from %d", len(fires), fires[0].N, schedule.KeepFires, n-schedule.KeepFires+1)
	}
	evs, _ := s.Events(ctx, "r")
	last := uint64(1 + 2*n) // created, then fired and finished per fire
	if len(evs) != schedule.KeepEvents || evs[len(evs)-1].Seq != last || evs[0].Seq != last-schedule.KeepEvents+1 {
		t.Errorf("kept %d entries, %d to %d; want %d ending at %d", len(evs), evs[0].Seq, evs[len(evs)-1].Seq, schedule.KeepEvents, last)
	}
}

func TestDecide(t *testing.T) {
	due := schedule.Schedule{ID: "d", State: schedule.StateActive, NextFire: t0}
	with := func(mod func(*schedule.Schedule)) schedule.Schedule {
		sc := due
		mod(&sc)
		return sc
	}
	tests := []struct {
		name   string
		sc     schedule.Schedule
		busy   bool
		queued int
		missed bool
		want   schedule.Action
	}{
		{"not due", with(func(s *schedule.Schedule) { s.NextFire = t0.Add(time.Second) }), false, 0, false, schedule.Wait},
		{"ended", with(func(s *schedule.Schedule) { s.State = schedule.StateEnded }), false, 0, false, schedule.Wait},
		{"due", due, false, 0, false, schedule.Run},
		{"missed, skip (default)", due, false, 0, true, schedule.Skip},
		{"missed, run-once", with(func(s *schedule.Schedule) { s.Missed = schedule.MissedRunOnce }), false, 0, true, schedule.Run},
		{"busy, skip (default)", due, true, 0, false, schedule.Skip},
		{"busy, queue", with(func(s *schedule.Schedule) { s.Overlap = schedule.OverlapQueue }), true, 0, false, schedule.Queue},
		{"busy, queue full", with(func(s *schedule.Schedule) { s.Overlap = schedule.OverlapQueue }), true, schedule.MaxQueued, false, schedule.Skip},
		{"missed run-once while busy, skip", with(func(s *schedule.Schedule) { s.Missed = schedule.MissedRunOnce }), true, 0, true, schedule.Skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := schedule.Decide(tt.sc, t0, tt.busy, tt.queued, tt.missed); got != tt.want {
				t.Errorf("Decide = %s, want %s", got, tt.want)
			}
		})
	}
}
