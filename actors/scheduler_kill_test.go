package actors_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/schedule"
)

// The scheduler kill test re-executes the test binary as a child that runs
// a scheduler on a data directory where a schedule came due while no
// process ran, SIGKILLs it at a chosen point of the fire's life, then
// starts a scheduler again in this process and checks that the fire ran
// exactly once.
const (
	schedKillEnvPoint = "AGCORE_SCHED_KILL_POINT"
	schedKillEnvDir   = "AGCORE_SCHED_KILL_DIR"
	schedKillEnvLog   = "AGCORE_SCHED_KILL_LOG"
	schedKillPrompt   = "charge the card"
)

// openSchedStore opens the store of dir and the schedules in it.
func openSchedStore(t *testing.T, dir string, clock func() time.Time, onEvent func(schedule.Event)) (*memory.Store, *schedule.Store) {
	t.Helper()
	mem, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return mem, schedule.New(mem, schedule.Options{Clock: clock, OnEvent: onEvent})
}

// TestSchedulerKillChild is the child's body; it does nothing in a normal
// run. It prints FIRED once the fire is journaled (before its run starts),
// TOOL-RUNNING once the run's non-idempotent tool has had its effect
// (point "tool" holds it there), and FINISHED once the fire is finished.
func TestSchedulerKillChild(t *testing.T) {
	point := os.Getenv(schedKillEnvPoint)
	if point == "" {
		t.Skip("runs only as the child of TestScheduler_KillDuringDowntimeFire")
	}
	mem, store := openSchedStore(t, os.Getenv(schedKillEnvDir), nil, func(ev schedule.Event) {
		switch ev.Type {
		case schedule.EventFired:
			fmt.Println("FIRED")
		case schedule.EventFinished:
			fmt.Println("FINISHED")
		}
	})
	defer mem.Close()
	reg := runAllRegistry(t)
	reg.MustRegister(sideEffect(os.Getenv(schedKillEnvLog), point == "tool"))
	rt, err := actors.New(actors.Config{Store: mem, Durability: memory.DurabilitySync, Schedules: store,
		Provider: scripted.MustNew(killScript(false), scripted.Options{}), Tools: reg,
		Limits: actors.Limits{ToolTimeout: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	<-t.Context().Done() // the parent kills the process long before
}

func TestScheduler_KillDuringDowntimeFire(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	for _, point := range []struct{ name, marker string }{
		{"fired", "FIRED"},       // the fire is journaled, its run has not started
		{"tool", "TOOL-RUNNING"}, // the run's tool has charged the card
		{"done", "FINISHED"},     // the fire is finished
	} {
		t.Run(point.name, func(t *testing.T) {
			dir := t.TempDir()
			dataDir, logPath := filepath.Join(dir, "data"), filepath.Join(dir, "charges.log")
			// A yearly schedule, created 400 days ago: its fire time came
			// while no process ran, and the next one is months away.
			created := time.Now().Add(-400 * 24 * time.Hour)
			mem, store := openSchedStore(t, dataDir, func() time.Time { return created }, nil)
			if _, err := store.Create(t.Context(), "nightly", schedule.Spec{Expr: "@yearly", Prompt: schedKillPrompt,
				Session: "night", Missed: schedule.MissedRunOnce}, "test"); err != nil {
				t.Fatal(err)
			}
			if err := mem.Close(); err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSchedulerKillChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), schedKillEnvPoint+"="+point.name, schedKillEnvDir+"="+dataDir, schedKillEnvLog+"="+logPath)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			seen := false
			for sc := bufio.NewScanner(out); sc.Scan(); {
				if strings.TrimSpace(sc.Text()) == point.marker {
					seen = true
					break
				}
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if !seen {
				t.Fatalf("the child never printed %s", point.marker)
			}

			// Start again: the fire is resumed (or found finished), never
			// fired a second time.
			finished := make(chan schedule.Event, 16)
			mem, store = openSchedStore(t, dataDir, nil, func(ev schedule.Event) {
				if ev.Type == schedule.EventFinished || ev.Type == schedule.EventFired {
					finished <- ev
				}
			})
			defer mem.Close()
			pending, err := store.Pending(ctx)
			if err != nil {
				t.Fatal(err)
			}
			reg := runAllRegistry(t)
			reg.MustRegister(sideEffect(logPath, false))
			rt, err := actors.New(actors.Config{Store: mem, Schedules: store,
				Provider: scripted.MustNew(killScript(false), scripted.Options{}), Tools: reg})
			if err != nil {
				t.Fatal(err)
			}
			if len(pending) > 0 {
				select {
				case ev := <-finished:
					if ev.Type != schedule.EventFinished || ev.Fire != "nightly-1" {
						t.Fatalf("after the restart: %+v, want nightly-1 finished", ev)
					}
				case <-ctx.Done():
					t.Fatal("the pending fire did not finish after the restart")
				}
			}
			if err := rt.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if len(finished) > 0 {
				t.Errorf("more fires after the restart: %+v", <-finished)
			}

			sc, err := store.Get(ctx, "nightly")
			if err != nil {
				t.Fatal(err)
			}
			fires, _ := store.Fires(ctx, "nightly")
			if sc.Runs != 1 || len(fires) != 1 || fires[0].Status != schedule.FireFinished || !sc.NextFire.After(time.Now()) {
				t.Errorf("schedule %+v, fires %+v: want one finished fire and the next fire time ahead", sc, fires)
			}
			j, err := memory.NewJournal(mem, memory.JournalOptions{Durability: memory.DurabilityNone})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			st, err := j.Load(ctx, "night")
			if err != nil {
				t.Fatal(err)
			}
			var prompts []string
			for _, m := range st.History {
				if m.Role == "user" {
					prompts = append(prompts, m.Text())
				}
			}
			if !slices.Equal(prompts, []string{schedKillPrompt}) {
				t.Errorf("the session's user messages %q, want the prompt once", prompts)
			}
			b, _ := os.ReadFile(logPath)
			if n := strings.Count(string(b), "charged"); n != 1 {
				t.Errorf("the card was charged %d times, want once", n)
			}
		})
	}
}
