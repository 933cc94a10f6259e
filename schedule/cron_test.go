package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/schedule"
)

func TestParseCron_Next(t *testing.T) {
	tests := []struct {
		expr, tz string
		from     time.Time
		want     time.Time
	}{
		{"*/5 * * * *", "", t0, time.Date(2023, 11, 14, 22, 15, 0, 0, time.UTC)},
		{"0 9 * * 1-5", "", t0, time.Date(2023, 11, 15, 9, 0, 0, 0, time.UTC)},
		{"@daily", "", t0, time.Date(2023, 11, 15, 0, 0, 0, 0, time.UTC)},
		{"@hourly", "", t0, time.Date(2023, 11, 14, 23, 0, 0, 0, time.UTC)},
		{"@every 10m", "", t0, t0.Add(10 * time.Minute)},
		{"@every 1h30m", "", t0, t0.Add(90 * time.Minute)},
		// 09:00 in Paris is 08:00 UTC in winter.
		{"0 9 * * *", "Europe/Paris", t0, time.Date(2023, 11, 15, 8, 0, 0, 0, time.UTC)},
		// and 07:00 UTC in summer.
		{"0 9 * * *", "Europe/Paris", time.Date(2023, 7, 1, 0, 0, 0, 0, time.UTC), time.Date(2023, 7, 1, 7, 0, 0, 0, time.UTC)},
		{"30 6 * * *", "America/New_York", t0, time.Date(2023, 11, 15, 11, 30, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.expr+" "+tt.tz, func(t *testing.T) {
			c, err := schedule.ParseCron(tt.expr, tt.tz)
			if err != nil {
				if tt.tz != "" && errors.Is(err, schedule.ErrInvalid) && fieldOf(err) == "time_zone" {
					t.Skipf("the time zone database lacks %s: %v", tt.tz, err)
				}
				t.Fatal(err)
			}
			if got := c.Next(tt.from); !got.Equal(tt.want) {
				t.Errorf("Next(%s) = %s, want %s", tt.from, got, tt.want)
			}
		})
	}
}

func fieldOf(err error) string {
	if fe, ok := errors.AsType[*schedule.FieldError](err); ok {
		return fe.Field
	}
	return ""
}

// TestParseCron_Malformed: a malformed expression or time zone is refused
// with an error that names the field.
func TestParseCron_Malformed(t *testing.T) {
	tests := []struct {
		expr, tz, field string
	}{
		{"", "", "expr"},
		{"   ", "", "expr"},
		{"* * * *", "", "expr"},          // four fields
		{"0 * * * * *", "", "expr"},      // six fields (seconds are not accepted)
		{"61 * * * *", "", "expr"},       // minute out of range
		{"* 24 * * *", "", "expr"},       // hour out of range
		{"* * 0 * *", "", "expr"},        // day of month out of range
		{"* * * 13 *", "", "expr"},       // month out of range
		{"* * * * 8", "", "expr"},        // day of week out of range
		{"*/0 * * * *", "", "expr"},      // zero step
		{"5-1 * * * *", "", "expr"},      // backwards range
		{"@fortnightly", "", "expr"},     // unknown descriptor
		{"@every", "", "expr"},           // no interval
		{"@every soon", "", "expr"},      // not a duration
		{"@every 500ms", "", "expr"},     // under a second
		{"@every 1500ms", "", "expr"},    // not whole seconds
		{"@every -5m", "", "expr"},       // negative
		{"TZ=UTC 0 9 * * *", "", "expr"}, // zone in the expression
		{"0 0 30 2 *", "", "expr"},       // 30 February never comes (Validate)
		{"0 9 * * *", "Mars/Olympus", "time_zone"},
		{"0 9 * * *", "Local", "time_zone"},
	}
	for _, tt := range tests {
		t.Run(tt.expr+"|"+tt.tz, func(t *testing.T) {
			_, err := schedule.Spec{Expr: tt.expr, TimeZone: tt.tz, Prompt: "p"}.Validate(t0)
			if !errors.Is(err, schedule.ErrInvalid) {
				t.Fatalf("Validate = %v, want an error wrapping ErrInvalid", err)
			}
			if got := fieldOf(err); got != tt.field {
				t.Errorf("the error %q names %q, want %q", err, got, tt.field)
			}
		})
	}
}

func TestCron_MinInterval(t *testing.T) {
	for expr, want := range map[string]time.Duration{
		"@every 30s":   30 * time.Second,
		"*/5 * * * *":  5 * time.Minute,
		"0,1 9 * * *":  time.Minute,
		"@daily":       24 * time.Hour,
		"0 9 * * 1-5":  24 * time.Hour,
		"@every 2h30m": 150 * time.Minute,
	} {
		c, err := schedule.ParseCron(expr, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := c.MinInterval(t0, 16); got != want {
			t.Errorf("%s: MinInterval = %s, want %s", expr, got, want)
		}
	}
}
