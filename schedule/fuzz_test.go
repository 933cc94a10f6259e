package schedule_test

import (
	"errors"
	"testing"

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
