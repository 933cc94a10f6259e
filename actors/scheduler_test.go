package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/schedule"
	"github.com/agcore/agcore/toolsys"
)

// schedT0 is where the scheduler tests' clocks start: 14 November 2023,
// 22:13:20 UTC.
var schedT0 = time.Unix(1_700_000_000, 0).UTC()

// fakeClock is a clock that moves only when the test advances it, firing
// the timers that fall due.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	// armed is closed, and replaced, whenever a timer is armed.
	armed chan struct{}
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{now: t, armed: make(chan struct{})} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	close(c.armed)
	c.armed = make(chan struct{})
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// advance moves the clock by d and runs the timers that fall due, each in
// its own goroutine as time.AfterFunc does.
func (c *fakeClock) advance(d time.Duration) {
	for _, f := range c.move(d) {
		go f()
	}
}

// advanceNow is advance with the due timers run before it returns, on the
// caller's goroutine (the scheduler's only sends a message).
func (c *fakeClock) advanceNow(d time.Duration) {
	for _, f := range c.move(d) {
		f()
	}
}

// move moves the clock by d and returns the timers that fell due.
func (c *fakeClock) move(d time.Duration) []func() {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool {
		if t.stopped {
			return true
		}
		if !t.at.After(c.now) {
			t.stopped = true
			due = append(due, t.f)
			return true
		}
		return false
	})
	c.mu.Unlock()
	return due
}

// schedEnv is a runtime with a scheduler over an in-memory store, on a
// fake clock, whose schedule journal entries the test reads from events.
type schedEnv struct {
	rt     *actors.Runtime
	store  *schedule.Store
	mem    *memory.Store
	clock  *fakeClock
	events chan schedule.Event
	// hook, when set, sees every journal entry first, on the goroutine
	// that journaled it (with the store's lock held: it must not call the
	// store).
	hook atomic.Pointer[func(schedule.Event)]
}

func newSchedEnv(t *testing.T, script scripted.Script, tools []toolsys.Tool, setup func(*schedEnv), mod func(*actors.Config)) *schedEnv {
	t.Helper()
	mem, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	e := &schedEnv{mem: mem, clock: newFakeClock(schedT0), events: make(chan schedule.Event, 1024)}
	e.store = schedule.New(mem, schedule.Options{Clock: e.clock.Now, OnEvent: func(ev schedule.Event) {
		if h := e.hook.Load(); h != nil {
			(*h)(ev)
		}
		e.events <- ev
	}})
	if setup != nil {
		setup(e)
	}
	prov, err := scripted.New(script, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := runAllRegistry(t)
	for _, tool := range tools {
		reg.MustRegister(tool)
	}
	cfg := actors.Config{Provider: prov, Tools: reg, Store: mem, Durability: memory.DurabilityNone,
		Schedules: e.store, Clock: e.clock, IdleTimeout: -1}
	if mod != nil {
		mod(&cfg)
	}
	if e.rt, err = actors.New(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.rt.Shutdown(ctx); err != nil && !errors.Is(err, actors.ErrClosed) {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return e
}

// create adds a schedule, failing the test on error.
func (e *schedEnv) create(t *testing.T, id string, spec schedule.Spec) {
	t.Helper()
	if _, err := e.store.Create(t.Context(), id, spec, "test"); err != nil {
		t.Fatal(err)
	}
}

// waitEvent returns the next journal entry of the given type, failing the
// test if none comes.
func (e *schedEnv) waitEvent(t *testing.T, typ schedule.EventType) schedule.Event {
	t.Helper()
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case ev := <-e.events:
			if ev.Type == typ {
				return ev
			}
		case <-timeout.C:
			t.Fatalf("no %s event in the schedule journal", typ)
		}
	}
}

// drain returns the journal entries written so far, without waiting.
func (e *schedEnv) drain() []schedule.Event {
	var out []schedule.Event
	for {
		select {
		case ev := <-e.events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// armed waits until the scheduler's timer is armed for at, so that
// advancing the clock to it fires it.
func (e *schedEnv) armed(t *testing.T, at time.Time) {
	t.Helper()
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	for {
		e.clock.mu.Lock()
		ok := slices.ContainsFunc(e.clock.timers, func(tm *fakeTimer) bool { return !tm.stopped && tm.at.Equal(at) })
		next := e.clock.armed
		e.clock.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-next:
		case <-timeout.C:
			t.Fatalf("the scheduler armed no timer for %s", at)
		}
	}
}

// userPrompts returns the user messages of session id's journal.
func userPrompts(t *testing.T, rt *actors.Runtime, id string) []string {
	t.Helper()
	st, err := rt.Journal().Load(t.Context(), id)
	if err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
	var out []string
	for _, m := range st.History {
		if m.Role == messages.RoleUser {
			out = append(out, m.Text())
		}
	}
	return out
}

func TestScheduler_FiresOnTheClock(t *testing.T) {
	e := newSchedEnv(t, textScript("checked"), nil, func(e *schedEnv) {
		e.create(t, "ops", schedule.Spec{Expr: "@every 10m", Prompt: "check the queue", Session: "ops-room"})
	}, nil)
	e.armed(t, schedT0.Add(10*time.Minute))
	if got := e.drain(); slices.ContainsFunc(got, func(ev schedule.Event) bool { return ev.Type == schedule.EventFired }) {
		t.Fatalf("fired before its time: %+v", got)
	}
	e.clock.advance(10 * time.Minute)
	fired := e.waitEvent(t, schedule.EventFired)
	if fired.Fire != "ops-1" || !fired.Due.Equal(schedT0.Add(10*time.Minute)) {
		t.Errorf("fired %+v", fired)
	}
	if fin := e.waitEvent(t, schedule.EventFinished); fin.Fire != "ops-1" || fin.Outcome != string(messages.OutcomeCompleted) {
		t.Errorf("finished %+v", fin)
	}
	e.armed(t, schedT0.Add(20*time.Minute))
	e.clock.advance(10 * time.Minute)
	e.waitEvent(t, schedule.EventFinished)
	if got := userPrompts(t, e.rt, "ops-room"); !slices.Equal(got, []string{"check the queue", "check the queue"}) {
		t.Errorf("ops-room's user messages %q, want the prompt twice", got)
	}
	fires, _ := e.store.Fires(t.Context(), "ops")
	if len(fires) != 2 || fires[0].TurnID != "schedule-ops-1" || fires[1].Status != schedule.FireFinished {
		t.Errorf("fires %+v", fires)
	}
}

// TestScheduler_FreshSessionAndAgent: a schedule without a session runs
// each fire in a session of its own, on the schedule's agent.
func TestScheduler_FreshSessionAndAgent(t *testing.T) {
	e := newSchedEnv(t, textScript("report"), nil, func(e *schedEnv) {
		e.create(t, "daily", schedule.Spec{Expr: "@daily", Prompt: "write the report", Agent: "reporter"})
	}, func(c *actors.Config) {
		c.Agents = []actors.AgentProfile{{Name: "default"}, {Name: "reporter", Prompt: "You write reports."}}
	})
	midnight := time.Date(2023, 11, 15, 0, 0, 0, 0, time.UTC)
	for i := range 2 {
		at := midnight.Add(time.Duration(i) * 24 * time.Hour)
		e.armed(t, at)
		e.clock.advance(at.Sub(e.clock.Now()))
		if fin := e.waitEvent(t, schedule.EventFinished); fin.Outcome != string(messages.OutcomeCompleted) {
			t.Fatalf("finished %+v", fin)
		}
	}
	for _, id := range []string{"daily-1", "daily-2"} {
		st, err := e.rt.Journal().Load(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Agent != "reporter" || len(st.History) != 2 || st.History[0].Text() != "write the report" {
			t.Errorf("session %s: agent %q, history %+v", id, st.Agent, st.History)
		}
	}
}

// blockingRun returns a script whose user turns call "hold", and the hold
// tool, which waits until release is closed; entered receives a value
// each time it starts.
func blockingRun() (scripted.Script, *funcTool, chan struct{}, chan struct{}) {
	entered, release := make(chan struct{}, 16), make(chan struct{})
	hold := &funcTool{name: "hold", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		entered <- struct{}{}
		select {
		case <-release:
			return toolsys.Result{Content: "released"}, nil
		case <-ctx.Done():
			return toolsys.Result{}, ctx.Err()
		}
	}}
	return toolScript("done", scripted.ToolCall{Name: "hold", Arguments: "{}"}), hold, entered, release
}

func waitChan(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

// TestScheduler_Overlap: a fire time that comes while the previous run is
// still going is skipped (the default) or queued and run after it.
func TestScheduler_Overlap(t *testing.T) {
	for _, policy := range []schedule.OverlapPolicy{"", schedule.OverlapQueue} {
		t.Run(string(policy), func(t *testing.T) {
			script, hold, entered, release := blockingRun()
			e := newSchedEnv(t, script, []toolsys.Tool{hold}, func(e *schedEnv) {
				e.create(t, "o", schedule.Spec{Expr: "@every 1m", Prompt: "slow job", Overlap: policy})
			}, func(c *actors.Config) { c.Limits.ToolTimeout = -1 })
			e.armed(t, schedT0.Add(time.Minute))
			e.clock.advance(time.Minute)
			waitChan(t, entered, "the first run")
			e.armed(t, schedT0.Add(2*time.Minute))
			e.clock.advance(time.Minute)
			var second schedule.Event
			if policy == schedule.OverlapQueue {
				second = e.waitEvent(t, schedule.EventQueued)
			} else {
				second = e.waitEvent(t, schedule.EventSkipped)
				if second.Reason != schedule.ReasonOverlap {
					t.Errorf("skip reason %q", second.Reason)
				}
			}
			e.armed(t, schedT0.Add(3*time.Minute)) // the scheduler has handled the fire time
			close(release)
			e.waitEvent(t, schedule.EventFinished)
			want := []string{"slow job"}
			if policy == schedule.OverlapQueue {
				if st := e.waitEvent(t, schedule.EventStarted); st.Fire != "o-2" {
					t.Errorf("started %+v", st)
				}
				e.waitEvent(t, schedule.EventFinished)
				want = append(want, "slow job")
			}
			// Runs of a schedule without a session each have their own.
			var got []string
			for n := 1; n <= len(want); n++ {
				got = append(got, userPrompts(t, e.rt, schedule.FireID("o", n))...)
			}
			if !slices.Equal(got, want) {
				t.Errorf("prompts run %q, want %q", got, want)
			}
			sc, _ := e.store.Get(t.Context(), "o")
			if sc.Runs != len(want) {
				t.Errorf("runs %d, want %d", sc.Runs, len(want))
			}
		})
	}
}

// TestScheduler_NextFireRightAfterAFinish fires a schedule again the
// moment its previous run's finish is journaled, before the scheduler has
// heard from the run's goroutine: the run is over, so the fire runs
// instead of being skipped as an overlap.
func TestScheduler_NextFireRightAfterAFinish(t *testing.T) {
	e := newSchedEnv(t, textScript("ok"), nil, func(e *schedEnv) {
		e.create(t, "often", schedule.Spec{Expr: "@every 1m", Prompt: "a", MaxRuns: 2})
	}, nil)
	advanced := false
	hook := func(ev schedule.Event) {
		if ev.Type == schedule.EventFinished && !advanced {
			advanced = true
			// The scheduler's tick is in its mailbox before the run's
			// goroutine can tell it the run is over.
			e.clock.advanceNow(time.Minute)
		}
	}
	e.hook.Store(&hook)
	e.armed(t, schedT0.Add(time.Minute))
	e.clock.advance(time.Minute)
	for n := 1; n <= 2; n++ {
		fin := e.waitEvent(t, schedule.EventFinished)
		if fin.Outcome != string(messages.OutcomeCompleted) {
			t.Fatalf("fire %d finished %+v", n, fin)
		}
	}
	for _, ev := range e.drain() {
		if ev.Type == schedule.EventSkipped {
			t.Errorf("a fire was skipped: %+v", ev)
		}
	}
}

// TestScheduler_MaxRunsAndEndDate: schedules stop firing after max_runs
// fires, or past their end date.
func TestScheduler_MaxRunsAndEndDate(t *testing.T) {
	e := newSchedEnv(t, textScript("ok"), nil, func(e *schedEnv) {
		e.create(t, "twice", schedule.Spec{Expr: "@every 1m", Prompt: "a", MaxRuns: 2})
		e.create(t, "until", schedule.Spec{Expr: "@every 1m", Prompt: "b", EndAt: schedT0.Add(150 * time.Second)})
	}, nil)
	for i := 1; i <= 4; i++ {
		at := schedT0.Add(time.Duration(i) * time.Minute)
		if i <= 2 {
			e.armed(t, at)
		}
		e.clock.advance(time.Minute)
		if i <= 2 {
			e.waitEvent(t, schedule.EventFinished)
			e.waitEvent(t, schedule.EventFinished)
		}
	}
	for _, id := range []string{"twice", "until"} {
		sc, err := e.store.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if sc.State != schedule.StateEnded || sc.Runs != 2 {
			t.Errorf("%s: %s after %d runs, want ended after 2", id, sc.State, sc.Runs)
		}
		fires, _ := e.store.Fires(t.Context(), id)
		if len(fires) != 2 {
			t.Errorf("%s: %d fires, want 2", id, len(fires))
		}
	}
}

// TestScheduler_MissedPolicies: fire times that passed while no scheduler
// ran are skipped, or fired once (not once per fire time missed).
func TestScheduler_MissedPolicies(t *testing.T) {
	e := newSchedEnv(t, textScript("ok"), nil, func(e *schedEnv) {
		e.create(t, "skipper", schedule.Spec{Expr: "@every 10m", Prompt: "skipped", Session: "a"})
		e.create(t, "catcher", schedule.Spec{Expr: "@every 10m", Prompt: "caught up", Session: "b", Missed: schedule.MissedRunOnce})
		// Down for an hour: six fire times of each pass.
		e.clock.advance(time.Hour + 5*time.Minute)
	}, nil)
	skip := e.waitEvent(t, schedule.EventSkipped)
	if skip.Schedule != "skipper" || skip.Reason != schedule.ReasonMissed {
		t.Errorf("skipped %+v", skip)
	}
	if fin := e.waitEvent(t, schedule.EventFinished); fin.Schedule != "catcher" {
		t.Errorf("finished %+v", fin)
	}
	e.armed(t, schedT0.Add(time.Hour+15*time.Minute))
	for _, ev := range e.drain() {
		if ev.Type == schedule.EventFired || ev.Type == schedule.EventSkipped {
			t.Errorf("more than one fire or skip: %+v", ev)
		}
	}
	if got := userPrompts(t, e.rt, "b"); !slices.Equal(got, []string{"caught up"}) {
		t.Errorf("catcher ran %q, want once", got)
	}
	if st, err := e.rt.Journal().Tail(t.Context(), "a"); err != nil || st != 0 {
		t.Errorf("skipper's session has a journal (tail %d, %v)", st, err)
	}
	for _, id := range []string{"skipper", "catcher"} {
		sc, _ := e.store.Get(t.Context(), id)
		if want := schedT0.Add(time.Hour + 15*time.Minute); !sc.NextFire.Equal(want) {
			t.Errorf("%s: next fire %s, want %s", id, sc.NextFire, want)
		}
	}
}

// TestScheduler_ResumesJournaledFire: a fire journaled by a process that
// stopped before its run reached the session runs when the scheduler
// starts; one whose turn had already run is not run again.
func TestScheduler_ResumesJournaledFire(t *testing.T) {
	var ran, lost schedule.Fire
	e := newSchedEnv(t, textScript("ok"), nil, func(e *schedEnv) {
		e.create(t, "ran", schedule.Spec{Expr: "@every 10m", Prompt: "already ran", Session: "r"})
		e.create(t, "lost", schedule.Spec{Expr: "@every 10m", Prompt: "never reached", Session: "l"})
		e.create(t, "queued", schedule.Spec{Expr: "@every 5m", Prompt: "waited", Session: "q", Overlap: schedule.OverlapQueue})
		// queued-1 finished, queued-2 waited for it: the process stopped
		// before it started.
		e.clock.advance(5 * time.Minute)
		q1, _, err := e.store.Fire(t.Context(), "queued", e.clock.Now(), false)
		if err != nil {
			t.Fatal(err)
		}
		e.clock.advance(5 * time.Minute)
		if _, _, err := e.store.Fire(t.Context(), "queued", e.clock.Now(), true); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Finish(t.Context(), "queued", q1.N, e.clock.Now(), "completed", ""); err != nil {
			t.Fatal(err)
		}
		if ran, _, err = e.store.Fire(t.Context(), "ran", e.clock.Now(), false); err != nil {
			t.Fatal(err)
		}
		if lost, _, err = e.store.Fire(t.Context(), "lost", e.clock.Now(), false); err != nil {
			t.Fatal(err)
		}
		// The first fire's turn ran before the process stopped.
		prov, _ := scripted.New(textScript("ok"), scripted.Options{})
		rt, err := actors.New(actors.Config{Provider: prov, Store: e.mem, Durability: memory.DurabilityNone, Clock: e.clock})
		if err != nil {
			t.Fatal(err)
		}
		sess, _ := rt.Open(t.Context(), "r")
		if _, err := sess.Submit(t.Context(), messages.UserText(ran.Prompt), actors.WithTurnID(ran.TurnID)); err != nil {
			t.Fatal(err)
		}
		if err := rt.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		e.drain()
	}, nil)
	done := map[string]bool{}
	for len(done) < 3 {
		done[e.waitEvent(t, schedule.EventFinished).Fire] = true
	}
	if !done[ran.ID] || !done[lost.ID] || !done["queued-2"] {
		t.Errorf("finished %v", done)
	}
	if got := userPrompts(t, e.rt, "q"); !slices.Equal(got, []string{"waited"}) {
		t.Errorf("q ran %q, want the queued fire once", got)
	}
	if evs, _ := e.store.Events(t.Context(), "queued"); !slices.ContainsFunc(evs, func(ev schedule.Event) bool {
		return ev.Type == schedule.EventStarted && ev.Fire == "queued-2"
	}) {
		t.Errorf("the resumed queued fire was not journaled as started: %+v", evs)
	}
	if got := userPrompts(t, e.rt, "r"); !slices.Equal(got, []string{"already ran"}) {
		t.Errorf("r ran %q, want once", got)
	}
	if got := userPrompts(t, e.rt, "l"); !slices.Equal(got, []string{"never reached"}) {
		t.Errorf("l ran %q, want once", got)
	}
	if p, _ := e.store.Pending(t.Context()); len(p) != 0 {
		t.Errorf("pending fires %+v", p)
	}
}

// TestScheduler_Changes: a schedule created while the scheduler runs is
// fired at its time, and a deleted one is not.
func TestScheduler_Changes(t *testing.T) {
	e := newSchedEnv(t, textScript("ok"), nil, nil, nil)
	e.create(t, "late", schedule.Spec{Expr: "@every 5m", Prompt: "added later", Session: "x"})
	e.create(t, "gone", schedule.Spec{Expr: "@every 5m", Prompt: "deleted", Session: "y"})
	e.armed(t, schedT0.Add(5*time.Minute))
	if err := e.store.Delete(t.Context(), "gone"); err != nil {
		t.Fatal(err)
	}
	e.clock.advance(5 * time.Minute)
	if fin := e.waitEvent(t, schedule.EventFinished); fin.Schedule != "late" {
		t.Errorf("finished %+v", fin)
	}
	if tail, _ := e.rt.Journal().Tail(t.Context(), "y"); tail != 0 {
		t.Error("the deleted schedule ran")
	}
}

// TestScheduler_Off: a runtime without Schedules fires nothing.
func TestScheduler_Off(t *testing.T) {
	e := newSchedEnv(t, textScript("ok"), nil, func(e *schedEnv) {
		e.create(t, "idle", schedule.Spec{Expr: "@every 1m", Prompt: "p", Session: "z", Missed: schedule.MissedRunOnce})
		e.clock.advance(time.Hour)
		e.drain()
	}, func(c *actors.Config) { c.Schedules = nil })
	e.clock.advance(time.Hour)
	if err := e.rt.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, ev := range e.drain() {
		t.Errorf("journaled without a scheduler: %+v", ev)
	}
	if sc, _ := e.store.Get(t.Context(), "idle"); sc.Runs != 0 {
		t.Errorf("runs %d", sc.Runs)
	}
}

// TestScheduler_AgentFollowUp: an agent schedules its own follow-up with
// schedule_create, and the scheduler runs it in the agent's session.
func TestScheduler_AgentFollowUp(t *testing.T) {
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Exact: "remind me in an hour"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			{Name: schedule.CreateToolName, Arguments: `{"expr":"@every 1h","prompt":"time to follow up","max_runs":1}`}}}},
		{Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "I will."}},
		{Match: scripted.Match{Role: messages.RoleUser, Exact: "time to follow up"}, Reply: scripted.Reply{Text: "Following up."}},
	}}
	e := newSchedEnv(t, script, nil, nil, func(c *actors.Config) {
		if err := schedule.RegisterTools(c.Tools.(*toolsys.Registry), c.Schedules, schedule.ToolsConfig{}); err != nil {
			t.Fatal(err)
		}
	})
	sess, err := e.rt.Open(t.Context(), "me")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.Submit(t.Context(), messages.UserText("remind me in an hour"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].IsError {
		t.Fatalf("schedule_create: %+v", res.ToolCalls)
	}
	e.waitEvent(t, schedule.EventCreated)
	e.armed(t, schedT0.Add(time.Hour))
	e.clock.advance(time.Hour)
	if fin := e.waitEvent(t, schedule.EventFinished); fin.Outcome != string(messages.OutcomeCompleted) {
		t.Fatalf("finished %+v", fin)
	}
	if got := userPrompts(t, e.rt, "me"); !slices.Equal(got, []string{"remind me in an hour", "time to follow up"}) {
		t.Errorf("the session's user messages %q", got)
	}
}
