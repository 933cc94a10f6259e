package schedule

// This file holds Spec, what a caller sets of a schedule, and Schedule,
// a stored schedule with the scheduler's state, with their validation.

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agcore/agcore/memory"
)

// Limits of a Spec.
const (
	// MaxIDLen is the longest schedule id, in bytes.
	MaxIDLen = 64
	// MaxPromptBytes is the longest prompt.
	MaxPromptBytes = 64 << 10
	// MaxNameBytes is the longest name.
	MaxNameBytes = 200
	// MaxQueued is how many fires of one schedule may wait for the run
	// before them under OverlapQueue; a fire beyond it is skipped.
	MaxQueued = 8
)

// MissedPolicy says what a schedule does with a fire time that passed
// while no scheduler ran (the process was down).
type MissedPolicy string

// The missed-run policies.
const (
	// MissedSkip drops the fire times that passed and waits for the next
	// one. It is the default (the empty policy).
	MissedSkip MissedPolicy = "skip"
	// MissedRunOnce fires once when the scheduler starts, however many
	// fire times passed, then follows the schedule.
	MissedRunOnce MissedPolicy = "run-once"
)

// OverlapPolicy says what a schedule does when its previous run is still
// going at a fire time.
type OverlapPolicy string

// The overlap policies.
const (
	// OverlapSkip drops the fire (journaled as skipped). It is the default
	// (the empty policy).
	OverlapSkip OverlapPolicy = "skip"
	// OverlapQueue journals the fire and runs it once the runs before it
	// have ended, in order; at most MaxQueued fires wait.
	OverlapQueue OverlapPolicy = "queue"
)

// State is the life-cycle state of a schedule.
type State string

// The states of a schedule.
const (
	// StateActive schedules fire at their next fire time.
	StateActive State = "active"
	// StateEnded schedules fire no more: their end date passed, they ran
	// MaxRuns times, or their expression has no further fire time. The
	// runs already fired still finish.
	StateEnded State = "ended"
)

// Spec is what a caller sets of a schedule. Expr and Prompt are required;
// every other field has a documented default.
type Spec struct {
	// Name is a label for people. Empty means none.
	Name string `json:"name,omitempty"`
	// Expr is the cron expression: five fields (minute hour day-of-month
	// month day-of-week, as in crontab), or a descriptor: @yearly,
	// @monthly, @weekly, @daily, @hourly, or "@every <duration>" (at
	// least one second; "@every 10m", "@every 1h30m"). The time zone is
	// TimeZone, not a CRON_TZ= prefix.
	Expr string `json:"expr"`
	// TimeZone is the IANA time zone the five fields are read in
	// ("Europe/Paris"). Empty means UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// Prompt is the user message each run submits.
	Prompt string `json:"prompt"`
	// Agent is the agent profile of the runs. Empty means the session's
	// own agent (for a fresh session, the runtime's default agent).
	Agent string `json:"agent,omitempty"`
	// Session is the one named session every run is submitted to, so that
	// its history accumulates. Empty means a fresh session per run, named
	// after the fire (<schedule id>-<run number>).
	Session string `json:"session,omitempty"`
	// EndAt is the end date: no fire after it. Zero means none.
	EndAt time.Time `json:"end_at,omitzero"`
	// MaxRuns is the number of fires after which the schedule ends. Zero
	// means no limit.
	MaxRuns int `json:"max_runs,omitempty"`
	// Missed is the missed-run policy. Empty means MissedSkip.
	Missed MissedPolicy `json:"missed,omitempty"`
	// Overlap is the overlap policy. Empty means OverlapSkip.
	Overlap OverlapPolicy `json:"overlap,omitempty"`
}

// Schedule is a stored schedule: its Spec and what the scheduler keeps of
// it.
type Schedule struct {
	// ID names the schedule: letters, digits, '-' and '_', at most
	// MaxIDLen bytes.
	ID string `json:"id"`
	Spec
	// CreatedBy says who created it: "cli", "http", or "session:<id>"
	// for a schedule_create call.
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// State is active or ended.
	State State `json:"state"`
	// EndReason says why an ended schedule ended.
	EndReason string `json:"end_reason,omitempty"`
	// NextFire is the next fire time; zero once the schedule has ended.
	NextFire time.Time `json:"next_fire,omitzero"`
	// Runs counts the fires so far.
	Runs int `json:"runs"`
	// LastFire is the id of the latest fire, empty before the first.
	LastFire string `json:"last_fire,omitempty"`

	// Events is the sequence number of the latest entry of the
	// schedule's journal (Store.Events).
	Events uint64 `json:"events"`
}

// ErrInvalid is wrapped by every error that refuses a Spec or an id; the
// *FieldError that wraps it names the field.
var ErrInvalid = errors.New("schedule: invalid schedule")

// FieldError is a Spec field, or the id, that is not valid.
type FieldError struct {
	// Field is the field's JSON name ("expr", "time_zone", ...).
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error implements error.
func (e *FieldError) Error() string { return fmt.Sprintf("schedule: %s: %s", e.Field, e.Reason) }

// Unwrap returns ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// ValidateID checks that id can name a schedule.
func ValidateID(id string) error {
	if id == "" {
		return fieldErr("id", "empty")
	}
	if len(id) > MaxIDLen {
		return fieldErr("id", "longer than %d bytes", MaxIDLen)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fieldErr("id", "%q holds %q; use letters, digits, '-' and '_'", id, r)
		}
	}
	return nil
}

// Validate checks every field of sp and returns the schedule it describes
// (its parsed expression and time zone). now is the time the check is
// made at: an end date before it is refused, and so is an expression with
// no fire time within five years of it.
func (sp Spec) Validate(now time.Time) (*Cron, error) {
	c, err := ParseCron(sp.Expr, sp.TimeZone)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(sp.Prompt) == "":
		return nil, fieldErr("prompt", "empty")
	case len(sp.Prompt) > MaxPromptBytes:
		return nil, fieldErr("prompt", "%d bytes, more than %d", len(sp.Prompt), MaxPromptBytes)
	case !utf8.ValidString(sp.Prompt):
		return nil, fieldErr("prompt", "not UTF-8")
	case len(sp.Name) > MaxNameBytes:
		return nil, fieldErr("name", "%d bytes, more than %d", len(sp.Name), MaxNameBytes)
	case !utf8.ValidString(sp.Name) || strings.ContainsFunc(sp.Name, unicode.IsControl):
		return nil, fieldErr("name", "not UTF-8 text without control characters")
	case !utf8.ValidString(sp.Agent) || strings.ContainsFunc(sp.Agent, unicode.IsControl) || len(sp.Agent) > MaxNameBytes:
		return nil, fieldErr("agent", "%q is not an agent name", sp.Agent)
	case !utf8.ValidString(sp.Session):
		// Stored as JSON, it would come back altered, naming another session.
		return nil, fieldErr("session", "%q is not UTF-8", sp.Session)
	case sp.MaxRuns < 0:
		return nil, fieldErr("max_runs", "%d is negative; 0 means no limit", sp.MaxRuns)
	case sp.Missed != "" && sp.Missed != MissedSkip && sp.Missed != MissedRunOnce:
		return nil, fieldErr("missed", "%q: want %q or %q", sp.Missed, MissedSkip, MissedRunOnce)
	case sp.Overlap != "" && sp.Overlap != OverlapSkip && sp.Overlap != OverlapQueue:
		return nil, fieldErr("overlap", "%q: want %q or %q", sp.Overlap, OverlapSkip, OverlapQueue)
	case !sp.EndAt.IsZero() && !sp.EndAt.After(now):
		return nil, fieldErr("end_at", "%s is not in the future", sp.EndAt.UTC().Format(time.RFC3339))
	}
	if sp.Session != "" {
		if err := memory.ValidateSession(sp.Session); err != nil {
			return nil, fieldErr("session", "%v", err)
		}
	}
	if c.Next(now).IsZero() {
		return nil, fieldErr("expr", "%q has no fire time within five years", sp.Expr)
	}
	return c, nil
}

// missed returns the effective missed-run policy.
func (sp Spec) missed() MissedPolicy {
	if sp.Missed == "" {
		return MissedSkip
	}
	return sp.Missed
}

// overlap returns the effective overlap policy.
func (sp Spec) overlap() OverlapPolicy {
	if sp.Overlap == "" {
		return OverlapSkip
	}
	return sp.Overlap
}

// MissedPolicy returns the effective missed-run policy: Missed, or
// MissedSkip when it is empty.
func (s Schedule) MissedPolicy() MissedPolicy { return s.missed() }

// OverlapPolicy returns the effective overlap policy: Overlap, or
// OverlapSkip when it is empty.
func (s Schedule) OverlapPolicy() OverlapPolicy { return s.overlap() }
