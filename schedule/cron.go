package schedule

// This file holds Cron, a parsed cron expression in its time zone.

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
)

// Cron is a parsed cron expression read in a time zone. It is immutable
// and safe for concurrent use.
type Cron struct {
	expr  string
	loc   *time.Location
	sched cron.Schedule
}

// parser reads five-field expressions and descriptors, as crontab does.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron parses expr (see Spec.Expr) in the IANA time zone tz (empty
// means UTC). Its errors are *FieldError naming "expr" or "time_zone".
func ParseCron(expr, tz string) (*Cron, error) {
	loc := time.UTC
	if tz != "" {
		if tz == "Local" {
			return nil, fieldErr("time_zone", "%q depends on the machine; name the zone (such as Europe/Paris)", tz)
		}
		l, err := time.LoadLocation(tz)
		if err != nil {
			return nil, fieldErr("time_zone", "%q is not an IANA time zone (such as Europe/Paris): %v", tz, err)
		}
		loc = l
	}
	e := strings.TrimSpace(expr)
	switch {
	case e == "":
		return nil, fieldErr("expr", "empty; want five fields (minute hour day-of-month month day-of-week) or a descriptor such as @daily or @every 10m")
	case strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ="):
		return nil, fieldErr("expr", "%q: set the time zone in time_zone, not in the expression", expr)
	case len(e) > 200:
		return nil, fieldErr("expr", "longer than 200 bytes")
	case !utf8.ValidString(e):
		return nil, fieldErr("expr", "not UTF-8")
	}
	if d, ok := strings.CutPrefix(e, "@every "); ok {
		// robfig/cron rounds what is below a second up to one second; an
		// interval that would be rounded is refused instead.
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			return nil, fieldErr("expr", "%q: the interval is not a duration such as 10m or 1h30m: %v", expr, err)
		}
		if dur < time.Second || dur%time.Second != 0 {
			return nil, fieldErr("expr", "%q: the interval must be a whole number of seconds, at least 1s", expr)
		}
	}
	sched, err := parse(e)
	if err != nil {
		return nil, fieldErr("expr", "%q: %v", expr, err)
	}
	if spec, ok := sched.(*cron.SpecSchedule); ok {
		spec.Location = loc
	}
	return &Cron{expr: e, loc: loc, sched: sched}, nil
}

// parse calls the parser, turning a panic on odd input into an error.
func parse(expr string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("cannot be parsed: %v", r)
		}
	}()
	return parser.Parse(expr)
}

// Next returns the first fire time strictly after t, or the zero time when
// there is none within five years.
func (c *Cron) Next(t time.Time) time.Time {
	next := c.sched.Next(t)
	if next.IsZero() {
		return next
	}
	return next.UTC()
}

// String returns the expression.
func (c *Cron) String() string { return c.expr }

// Location returns the time zone the expression is read in.
func (c *Cron) Location() *time.Location { return c.loc }

// MinInterval returns the shortest gap between two of the next n fire
// times after t (n at least 2), or zero when there are fewer than two.
func (c *Cron) MinInterval(t time.Time, n int) time.Duration {
	var least time.Duration
	prev := c.Next(t)
	for range n - 1 {
		if prev.IsZero() {
			break
		}
		next := c.Next(prev)
		if next.IsZero() {
			break
		}
		if gap := next.Sub(prev); least == 0 || gap < least {
			least = gap
		}
		prev = next
	}
	return least
}
