package schedule_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"

	"github.com/agcore/agcore/schedule"
)

// FuzzParseCron: any expression and zone either parse, into a schedule
// whose fire times move forward, or are refused with a *FieldError naming
// expr or time_zone; nothing panics.
func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 9 * * 1-5", "@every 10m", "@daily", "61 * * * *", "@every 0s",
		"TZ=UTC * * * * *", "1-5/2,7 */3 1,15 JAN-DEC MON-FRI", "? ? ? ? ?", "@every 9999999999h"} {
		f.Add(s, "")
	}
	f.Add("0 9 * * *", "Europe/Paris")
	f.Add("0 9 * * *", "../../etc/passwd")
	f.Fuzz(func(t *testing.T, expr, tz string) {
		c, err := schedule.ParseCron(expr, tz)
		if err != nil {
			fe, ok := errors.AsType[*schedule.FieldError](err)
			if !ok || (fe.Field != "expr" && fe.Field != "time_zone") || !errors.Is(err, schedule.ErrInvalid) {
				t.Fatalf("ParseCron(%q, %q) = %v, want a *FieldError on expr or time_zone", expr, tz, err)
			}
			return
		}
		next := c.Next(t0)
		if !next.IsZero() && !next.After(t0) {
			t.Fatalf("ParseCron(%q, %q).Next(%s) = %s, not after it", expr, tz, t0, next)
		}
	})
}

// FuzzSpec: any spec is either refused with a *FieldError naming one of
// its fields, or stored, fired and read back whole.
func FuzzSpec(f *testing.F) {
	f.Add("@daily", "", "report", "", "", "", 0, "", "")
	f.Add("0 9 * * 1-5", "Europe/Paris", "standup", "daily", "reports", "default", 3, "run-once", "queue")
	f.Add("*/5 * * * *", "UTC", " ", "x\x00", "a/b", "ag\n", -1, "later", "both")
	mem, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = mem.Close() })
	s := schedule.New(mem, schedule.Options{Clock: func() time.Time { return t0 }})
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, expr, tz, prompt, name, session, agent string, maxRuns int, missed, overlap string) {
		id := fmt.Sprintf("f%d", n.Add(1))
		spec := schedule.Spec{Expr: expr, TimeZone: tz, Prompt: prompt, Name: name, Session: session, Agent: agent,
			MaxRuns: maxRuns, Missed: schedule.MissedPolicy(missed), Overlap: schedule.OverlapPolicy(overlap)}
		sc, err := s.Create(t.Context(), id, spec, "fuzz")
		if err != nil {
			fe, ok := errors.AsType[*schedule.FieldError](err)
			if !ok || !errors.Is(err, schedule.ErrInvalid) {
				t.Fatalf("Create = %v, want a *FieldError", err)
			}
			switch fe.Field {
			case "expr", "time_zone", "prompt", "name", "session", "agent", "max_runs", "missed", "overlap", "end_at":
			default:
				t.Fatalf("the error names %q, not a field of the spec", fe.Field)
			}
			return
		}
		got, err := s.Get(t.Context(), id)
		if err != nil || got.Spec != sc.Spec || got.Prompt != prompt {
			t.Fatalf("read back %+v, %v; stored %+v", got, err, sc)
		}
		if _, _, err := s.Fire(t.Context(), id, sc.NextFire, false); err != nil {
			t.Fatalf("Fire at the next fire time: %v", err)
		}
	})
}
