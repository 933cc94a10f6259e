package schedule

// This file holds the tools that let agents schedule their own follow-ups:
// schedule_create, schedule_list and schedule_delete.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agcore/agcore/toolsys"
)

// The names of the schedule tools.
const (
	CreateToolName = "schedule_create"
	ListToolName   = "schedule_list"
	DeleteToolName = "schedule_delete"
)

// Defaults of ToolsConfig.
const (
	// DefaultMinInterval is ToolsConfig.MinInterval when it is zero.
	DefaultMinInterval = time.Minute
	// DefaultMaxPerSession is ToolsConfig.MaxPerSession when it is zero.
	DefaultMaxPerSession = 10
)

// ToolsConfig bounds what agents may schedule. The zero value is the
// default.
type ToolsConfig struct {
	// MinInterval is the shortest gap allowed between two fire times of a
	// schedule a tool creates. Zero means DefaultMinInterval; negative
	// means no bound.
	MinInterval time.Duration
	// MaxPerSession is how many active schedules one session may have
	// created. Zero means DefaultMaxPerSession.
	MaxPerSession int
}

func (c ToolsConfig) withDefaults() ToolsConfig {
	if c.MinInterval == 0 {
		c.MinInterval = DefaultMinInterval
	}
	if c.MaxPerSession <= 0 {
		c.MaxPerSession = DefaultMaxPerSession
	}
	return c
}

// Tools returns schedule_create, schedule_list and schedule_delete over s
// (nil s gives tools to list only: each call answers with an error result).
// A schedule a tool creates belongs to the calling session (CreatedBy
// "session:<id>") and runs in that session, with the session's own agent;
// schedule_list and schedule_delete see only the calling session's
// schedules. schedule_create and schedule_delete need PermWrite and
// schedule_list PermReadOnly, so the registry's permission pipeline
// decides them like any other call.
func Tools(s *Store, cfg ToolsConfig) []toolsys.Tool {
	cfg = cfg.withDefaults()
	return []toolsys.Tool{
		toolsys.Bridge[createParams](&createTool{s: s, cfg: cfg}),
		toolsys.Bridge[listParams](&listTool{s: s}),
		toolsys.Bridge[deleteParams](&deleteTool{s: s}),
	}
}

// RegisterTools registers Tools(s, cfg) in reg, with source
// toolsys.SourceSchedule and category "schedule".
func RegisterTools(reg *toolsys.Registry, s *Store, cfg ToolsConfig) error {
	for _, t := range Tools(s, cfg) {
		if err := reg.Register(t, toolsys.WithSource(toolsys.SourceSchedule), toolsys.WithCategory("schedule"), toolsys.WithTags("schedule")); err != nil {
			return fmt.Errorf("schedule: register %s: %w", t.Name(), err)
		}
	}
	return nil
}

// errNoStore answers the calls of tools made without a Store.
var errNoStore = errors.New("no schedule store: this program lists the tool but cannot run it")

// owner returns the CreatedBy of the calling session's schedules.
func owner(tc *toolsys.Context) (string, bool) {
	if tc == nil || tc.SessionID == "" {
		return "", false
	}
	return "session:" + tc.SessionID, true
}

// createParams are the arguments of schedule_create.
type createParams struct {
	Expr     string `json:"expr" jsonschema:"description=When to run: five cron fields (minute hour day-of-month month day-of-week; such as 0 9 * * 1-5) or @hourly / @daily / @weekly / @monthly / @every 30m."`
	Prompt   string `json:"prompt" jsonschema:"description=The message each run submits as the user."`
	TimeZone string `json:"time_zone,omitempty" jsonschema:"description=IANA time zone of the cron fields (such as Europe/Paris). Default UTC."`
	MaxRuns  int    `json:"max_runs,omitempty" jsonschema:"description=End after this many runs (0 = no limit).,minimum=0"`
	EndAt    string `json:"end_at,omitempty" jsonschema:"description=End date: no run after it (RFC 3339 such as 2030-01-31T18:00:00Z)."`
	Name     string `json:"name,omitempty" jsonschema:"description=A short label."`
	Overlap  string `json:"overlap,omitempty" jsonschema:"description=When a run is still going at the next fire time: skip it (default) or queue it.,enum=skip,enum=queue"`
	Missed   string `json:"missed,omitempty" jsonschema:"description=When fire times passed while agcore was down: skip them (default) or run once.,enum=skip,enum=run-once"`
}

type createTool struct {
	s   *Store
	cfg ToolsConfig
}

var _ toolsys.Typed[createParams] = (*createTool)(nil)

func (t *createTool) Name() string { return CreateToolName }
func (t *createTool) Description() string {
	return "Schedule a prompt to run in this session later, once or repeatedly (a follow-up, a daily check)."
}
func (t *createTool) Permission() toolsys.Permission { return toolsys.PermWrite }
func (t *createTool) SecretParams() []string         { return nil }

// Execute validates and stores the schedule.
func (t *createTool) Execute(ctx context.Context, p createParams, tc *toolsys.Context) (toolsys.Result, error) {
	if t.s == nil {
		return toolsys.ErrorResult("%s: %v", CreateToolName, errNoStore), nil
	}
	by, ok := owner(tc)
	if !ok {
		return toolsys.ErrorResult("%s: only a session can create schedules", CreateToolName), nil
	}
	// The runs go to the calling session, with its own agent: a fresh
	// session would run on the default agent, which may hold tools the
	// caller's agent does not.
	spec := Spec{Name: p.Name, Expr: p.Expr, TimeZone: p.TimeZone, Prompt: p.Prompt, MaxRuns: p.MaxRuns,
		Missed: MissedPolicy(p.Missed), Overlap: OverlapPolicy(p.Overlap), Session: tc.SessionID}
	if p.EndAt != "" {
		end, err := time.Parse(time.RFC3339, p.EndAt)
		if err != nil {
			return toolsys.ErrorResult("%s: end_at: %q is not an RFC 3339 time such as 2030-01-31T18:00:00Z", CreateToolName, p.EndAt), nil
		}
		spec.EndAt = end
	}
	c, err := spec.Validate(t.s.now())
	if err != nil {
		return toolsys.ErrorResult("%s: %v", CreateToolName, strings.TrimPrefix(err.Error(), "schedule: ")), nil
	}
	if t.cfg.MinInterval > 0 {
		if gap := c.MinInterval(t.s.now(), 16); gap > 0 && gap < t.cfg.MinInterval {
			return toolsys.ErrorResult("%s: expr: %q fires every %s; schedules created by agents may fire at most every %s",
				CreateToolName, p.Expr, gap, t.cfg.MinInterval), nil
		}
	}
	all, err := t.s.List(ctx)
	if err != nil {
		return toolsys.Result{}, err
	}
	active := 0
	for _, sc := range all {
		if sc.CreatedBy == by && sc.State == StateActive {
			active++
		}
	}
	if active >= t.cfg.MaxPerSession {
		return toolsys.ErrorResult("%s: this session has %d active schedules, the most allowed; delete one with %s first",
			CreateToolName, active, DeleteToolName), nil
	}
	sc, err := t.s.Create(ctx, "", spec, by)
	if err != nil {
		if errors.Is(err, ErrInvalid) {
			return toolsys.ErrorResult("%s: %v", CreateToolName, strings.TrimPrefix(err.Error(), "schedule: ")), nil
		}
		return toolsys.Result{}, err
	}
	return toolsys.Result{Content: fmt.Sprintf("scheduled %s: %s; next run %s", sc.ID, describeTarget(sc), sc.NextFire.Format(time.RFC3339)),
		Metadata: map[string]any{"schedule": sc.ID, "next_fire": sc.NextFire.Format(time.RFC3339)}}, nil
}

func describeTarget(sc Schedule) string {
	if sc.Session == "" {
		return "each run in a fresh session"
	}
	return "runs in session " + sc.Session
}

// listParams are the arguments of schedule_list.
type listParams struct{}

type listTool struct{ s *Store }

var _ toolsys.Typed[listParams] = (*listTool)(nil)

func (t *listTool) Name() string { return ListToolName }
func (t *listTool) Description() string {
	return "List the schedules this session created: id, expression, next run, runs so far and prompt."
}
func (t *listTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (t *listTool) SecretParams() []string         { return nil }

// Execute lists the calling session's schedules.
func (t *listTool) Execute(ctx context.Context, _ listParams, tc *toolsys.Context) (toolsys.Result, error) {
	if t.s == nil {
		return toolsys.ErrorResult("%s: %v", ListToolName, errNoStore), nil
	}
	by, ok := owner(tc)
	if !ok {
		return toolsys.ErrorResult("%s: only a session has schedules", ListToolName), nil
	}
	all, err := t.s.List(ctx)
	if err != nil {
		return toolsys.Result{}, err
	}
	var b strings.Builder
	n := 0
	for _, sc := range all {
		if sc.CreatedBy != by {
			continue
		}
		n++
		next := "none (" + sc.EndReason + ")"
		if sc.State == StateActive {
			next = sc.NextFire.Format(time.RFC3339)
		}
		fmt.Fprintf(&b, "%s  expr=%q  next=%s  runs=%d  %s  prompt=%q\n", sc.ID, sc.Expr, next, sc.Runs, describeTarget(sc), sc.Prompt)
	}
	if n == 0 {
		return toolsys.Result{Content: "this session has no schedules"}, nil
	}
	return toolsys.Result{Content: b.String(), Metadata: map[string]any{"schedules": n}}, nil
}

// deleteParams are the arguments of schedule_delete.
type deleteParams struct {
	ID string `json:"id" jsonschema:"description=The schedule's id, as schedule_create and schedule_list give it."`
}

type deleteTool struct{ s *Store }

var _ toolsys.Typed[deleteParams] = (*deleteTool)(nil)

func (t *deleteTool) Name() string { return DeleteToolName }
func (t *deleteTool) Description() string {
	return "Delete a schedule this session created, so that it runs no more."
}
func (t *deleteTool) Permission() toolsys.Permission { return toolsys.PermWrite }
func (t *deleteTool) SecretParams() []string         { return nil }

// Execute deletes one of the calling session's schedules.
func (t *deleteTool) Execute(ctx context.Context, p deleteParams, tc *toolsys.Context) (toolsys.Result, error) {
	if t.s == nil {
		return toolsys.ErrorResult("%s: %v", DeleteToolName, errNoStore), nil
	}
	by, ok := owner(tc)
	if !ok {
		return toolsys.ErrorResult("%s: only a session can delete schedules", DeleteToolName), nil
	}
	sc, err := t.s.Get(ctx, p.ID)
	if errors.Is(err, ErrNotFound) || err == nil && sc.CreatedBy != by {
		return toolsys.ErrorResult("%s: id: this session created no schedule %q (see %s)", DeleteToolName, p.ID, ListToolName), nil
	}
	if err != nil {
		return toolsys.Result{}, err
	}
	if err := t.s.Delete(ctx, p.ID); err != nil {
		if errors.Is(err, ErrNotFound) {
			return toolsys.ErrorResult("%s: id: no schedule %q", DeleteToolName, p.ID), nil
		}
		return toolsys.Result{}, err
	}
	return toolsys.Result{Content: "deleted schedule " + p.ID}, nil
}
