package httpapi

// This file holds the routes of the schedules: /v1/schedules and
// /v1/schedules/{schedule_id}.

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/agcore/agcore/schedule"
)

// ScheduleRequest is the body of POST /v1/schedules and of
// PUT /v1/schedules/{schedule_id}.
type ScheduleRequest struct {
	// ID is the new schedule's id (POST only): letters, digits, '-' and
	// '_', at most 64 bytes. Empty means a generated id.
	ID string `json:"id,omitempty"`
	// Name is a label for people.
	Name string `json:"name,omitempty"`
	// Expr is the cron expression: five fields (minute hour day-of-month
	// month day-of-week), or @yearly, @monthly, @weekly, @daily, @hourly or
	// "@every" and a duration of at least 1s ("@every 10m"). Required.
	Expr string `json:"expr" jsonschema:"required,minLength=1"`
	// TimeZone is the IANA time zone of the fields ("Europe/Paris"). Empty
	// means UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// Prompt is the user message of each run. Required.
	Prompt string `json:"prompt" jsonschema:"required,minLength=1"`
	// Agent is the agent profile of the runs. Empty means the session's.
	Agent string `json:"agent,omitempty"`
	// Session is the one session every run is submitted to. Empty means a
	// fresh session per run, named after the fire: the schedule's id, '-'
	// and the run number.
	Session string `json:"session,omitempty"`
	// EndAt is the end date, RFC 3339: no fire after it. Empty means none.
	EndAt string `json:"end_at,omitempty" jsonschema:"format=date-time"`
	// MaxRuns is the number of runs after which the schedule ends. Zero
	// means no limit.
	MaxRuns int `json:"max_runs,omitempty" jsonschema:"minimum=0"`
	// Missed is what to do with fire times that passed while no scheduler
	// ran: skip them (the default) or run once.
	Missed string `json:"missed,omitempty" jsonschema:"enum=skip,enum=run-once"`
	// Overlap is what to do with a fire time that comes while the previous
	// run goes on: skip it (the default) or queue it.
	Overlap string `json:"overlap,omitempty" jsonschema:"enum=skip,enum=queue"`
}

// Schedule is a schedule as the API shows it.
type Schedule struct {
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
	Expr     string `json:"expr"`
	TimeZone string `json:"time_zone,omitempty"`
	Prompt   string `json:"prompt"`
	Agent    string `json:"agent,omitempty"`
	// Session is the session of every run; absent for a fresh session per
	// run.
	Session string    `json:"session,omitempty"`
	EndAt   time.Time `json:"end_at,omitzero"`
	MaxRuns int       `json:"max_runs,omitempty"`
	Missed  string    `json:"missed" jsonschema:"enum=skip,enum=run-once"`
	Overlap string    `json:"overlap" jsonschema:"enum=skip,enum=queue"`
	// CreatedBy is "cli", "http", or "session:" and the session's id for
	// an agent's schedule_create.
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// State is "active", or "ended" once it fires no more.
	State string `json:"state" jsonschema:"enum=active,enum=ended"`
	// EndReason says why an ended schedule ended.
	EndReason string `json:"end_reason,omitempty"`
	// NextFire is the next fire time; absent once ended.
	NextFire time.Time `json:"next_fire,omitzero"`
	// Runs counts the fires so far.
	Runs int `json:"runs"`
	// Fires are the latest fires, oldest first (GET of one schedule only).
	Fires []ScheduleFire `json:"fires,omitempty"`
}

// ScheduleFire is one fire of a schedule.
type ScheduleFire struct {
	// ID is the schedule's id, '-' and the run number (from 1).
	ID string `json:"id"`
	// Due is the fire time; FiredAt when the scheduler fired it.
	Due     time.Time `json:"due"`
	FiredAt time.Time `json:"fired_at"`
	// Session and TurnID are where the run was submitted.
	Session string `json:"session"`
	TurnID  string `json:"turn_id"`
	// Status is "queued", "running" or "finished".
	Status     string    `json:"status" jsonschema:"enum=queued,enum=running,enum=finished"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Outcome is the turn's outcome, or "error" when it could not be
	// submitted.
	Outcome string `json:"outcome,omitempty"`
	// Reason explains an outcome other than completed.
	Reason string `json:"reason,omitempty"`
}

// ScheduleList is the body of GET /v1/schedules.
type ScheduleList struct {
	Schedules []Schedule `json:"schedules"`
}

func scheduleOf(sc schedule.Schedule) Schedule {
	return Schedule{ID: sc.ID, Name: sc.Name, Expr: sc.Expr, TimeZone: sc.TimeZone, Prompt: sc.Prompt, Agent: sc.Agent,
		Session: sc.Session, EndAt: sc.EndAt, MaxRuns: sc.MaxRuns, Missed: string(sc.MissedPolicy()),
		Overlap: string(sc.OverlapPolicy()), CreatedBy: sc.CreatedBy, CreatedAt: sc.CreatedAt, UpdatedAt: sc.UpdatedAt,
		State: string(sc.State), EndReason: sc.EndReason, NextFire: sc.NextFire, Runs: sc.Runs}
}

// schedules returns the server's schedules, or a 404 when it keeps none.
func (s *Server) schedules() (*schedule.Store, error) {
	if s.cfg.Schedules == nil {
		return nil, apiErr(http.StatusNotFound, CodeNotFound, "this server keeps no schedules (it runs without a data directory)")
	}
	return s.cfg.Schedules, nil
}

// spec checks req and returns the Spec it describes.
func (s *Server) spec(req ScheduleRequest) (schedule.Spec, error) {
	sp := schedule.Spec{Name: req.Name, Expr: req.Expr, TimeZone: req.TimeZone, Prompt: req.Prompt, Agent: req.Agent,
		Session: req.Session, MaxRuns: req.MaxRuns, Missed: schedule.MissedPolicy(req.Missed), Overlap: schedule.OverlapPolicy(req.Overlap)}
	if req.EndAt != "" {
		end, err := time.Parse(time.RFC3339, req.EndAt)
		if err != nil {
			return sp, apiErr(http.StatusBadRequest, CodeBadRequest, "end_at: %q is not an RFC 3339 time such as 2030-01-31T18:00:00Z", req.EndAt)
		}
		sp.EndAt = end
	}
	if req.Agent != "" && len(s.cfg.Agents) > 0 && !slices.Contains(s.cfg.Agents, req.Agent) {
		return sp, apiErr(http.StatusBadRequest, CodeBadRequest, "agent: unknown agent %q (agents: %v)", req.Agent, s.cfg.Agents)
	}
	return sp, nil
}

// scheduleID returns the {schedule_id} of the path: a 404 when it is not
// a valid id, since no schedule can have it.
func scheduleID(r *http.Request) (string, error) {
	id := r.PathValue("schedule_id")
	if err := schedule.ValidateID(id); err != nil {
		return "", &Error{Status: http.StatusNotFound, Code: CodeScheduleNotFound, Message: fmt.Sprintf("schedule %q does not exist: %v", id, err), Err: err}
	}
	return id, nil
}

// scheduleError maps an error of the schedule store to a response.
func scheduleError(id string, err error) error {
	switch {
	case errors.Is(err, schedule.ErrInvalid):
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: err.Error(), Err: err}
	case errors.Is(err, schedule.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: CodeScheduleNotFound, Message: fmt.Sprintf("schedule %q does not exist", id), Err: err}
	case errors.Is(err, schedule.ErrExists):
		return &Error{Status: http.StatusConflict, Code: CodeScheduleExists, Message: fmt.Sprintf("schedule %q already exists", id), Err: err}
	}
	return err
}

func (s *Server) handleListSchedules(w http.ResponseWriter, r *http.Request) {
	store, err := s.schedules()
	if err != nil {
		writeError(w, err)
		return
	}
	all, err := store.List(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	out := ScheduleList{Schedules: make([]Schedule, len(all))}
	for i, sc := range all {
		out.Schedules[i] = scheduleOf(sc)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleCreateSchedule(w http.ResponseWriter, r *http.Request) {
	store, err := s.schedules()
	if err != nil {
		writeError(w, err)
		return
	}
	var req ScheduleRequest
	if err := decodeBody(r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	sp, err := s.spec(req)
	if err != nil {
		writeError(w, err)
		return
	}
	sc, err := store.Create(r.Context(), req.ID, sp, "http")
	if err != nil {
		writeError(w, scheduleError(req.ID, err))
		return
	}
	w.Header().Set("Location", "/v1/schedules/"+sc.ID)
	writeJSON(w, http.StatusCreated, scheduleOf(sc))
}

func (s *Server) handleGetSchedule(w http.ResponseWriter, r *http.Request) {
	store, err := s.schedules()
	if err != nil {
		writeError(w, err)
		return
	}
	id, err := scheduleID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	sc, err := store.Get(r.Context(), id)
	if err != nil {
		writeError(w, scheduleError(id, err))
		return
	}
	fires, err := store.Fires(r.Context(), id)
	if err != nil {
		writeError(w, err)
		return
	}
	out := scheduleOf(sc)
	for _, f := range fires {
		out.Fires = append(out.Fires, ScheduleFire{ID: f.ID, Due: f.Due, FiredAt: f.FiredAt, Session: f.Session, TurnID: f.TurnID,
			Status: string(f.Status), FinishedAt: f.FinishedAt, Outcome: f.Outcome, Reason: f.Reason})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleUpdateSchedule(w http.ResponseWriter, r *http.Request) {
	store, err := s.schedules()
	if err != nil {
		writeError(w, err)
		return
	}
	id, err := scheduleID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req ScheduleRequest
	if err := decodeBody(r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	if req.ID != "" && req.ID != id {
		writeError(w, apiErr(http.StatusBadRequest, CodeBadRequest, "id: %q differs from the path's %q; a schedule's id cannot change", req.ID, id))
		return
	}
	sp, err := s.spec(req)
	if err != nil {
		writeError(w, err)
		return
	}
	sc, err := store.Update(r.Context(), id, sp)
	if err != nil {
		writeError(w, scheduleError(id, err))
		return
	}
	writeJSON(w, http.StatusOK, scheduleOf(sc))
}

func (s *Server) handleDeleteSchedule(w http.ResponseWriter, r *http.Request) {
	store, err := s.schedules()
	if err != nil {
		writeError(w, err)
		return
	}
	id, err := scheduleID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := store.Delete(r.Context(), id); err != nil {
		writeError(w, scheduleError(id, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// scheduleRoutes returns the routes of the schedules.
func scheduleRoutes() []route {
	badBody := failure{http.StatusBadRequest, "The body is not valid, or a field is not (the message names it: expr, time_zone, prompt, end_at, ...).",
		[]string{CodeBadRequest, CodeInvalidJSON, CodeUnknownField}}
	notFound := failure{http.StatusNotFound, "The schedule does not exist, or the server keeps no schedules.",
		[]string{CodeScheduleNotFound, CodeNotFound}}
	noStore := failure{http.StatusNotFound, "The server keeps no schedules.", []string{CodeNotFound}}
	return []route{
		{http.MethodGet, "/v1/schedules", (*Server).handleListSchedules, operation{
			id: "listSchedules", tag: tagSchedules,
			summary:     "List schedules",
			description: "Every schedule of the data directory, active and ended, sorted by id, with its next fire time and run count.",
			replies:     []reply{{status: http.StatusOK, description: "The schedules.", json: ScheduleList{}}},
			failures:    []failure{noStore},
		}},
		{http.MethodPost, "/v1/schedules", (*Server).handleCreateSchedule, operation{
			id: "createSchedule", tag: tagSchedules,
			summary: "Create a schedule",
			description: "Creates a cron schedule that submits the prompt to its session (or to a fresh session per run) at " +
				"each fire time. The server fires it unless schedules.disabled is set; each fire is journaled before its run starts.",
			body: &requestBody{value: ScheduleRequest{}, required: true, description: "The schedule."},
			replies: []reply{{status: http.StatusCreated, description: "The schedule was created.", json: Schedule{},
				headers: map[string]string{"Location": "The path of the new schedule, /v1/schedules/{schedule_id}."}}},
			failures: []failure{badBody,
				{http.StatusConflict, "A schedule with this id exists.", []string{CodeScheduleExists}}, noStore},
		}},
		{http.MethodGet, "/v1/schedules/{schedule_id}", (*Server).handleGetSchedule, operation{
			id: "getSchedule", tag: tagSchedules,
			summary:     "A schedule and its fires",
			description: "The schedule, with its latest fires (up to 100): when each was due and fired, its session and turn id, and how its run ended.",
			replies:     []reply{{status: http.StatusOK, description: "The schedule.", json: Schedule{}}},
			failures:    []failure{notFound},
		}},
		{http.MethodPut, "/v1/schedules/{schedule_id}", (*Server).handleUpdateSchedule, operation{
			id: "updateSchedule", tag: tagSchedules,
			summary: "Change a schedule",
			description: "Replaces the schedule's settings (journaled as changed). Its next fire time is computed afresh; its run " +
				"count is kept, and an ended schedule is active again when the new settings allow more runs.",
			body:     &requestBody{value: ScheduleRequest{}, required: true, description: "The schedule's new settings; id, if sent, must be the path's."},
			replies:  []reply{{status: http.StatusOK, description: "The changed schedule.", json: Schedule{}}},
			failures: []failure{badBody, notFound},
		}},
		{http.MethodDelete, "/v1/schedules/{schedule_id}", (*Server).handleDeleteSchedule, operation{
			id: "deleteSchedule", tag: tagSchedules,
			summary:     "Delete a schedule",
			description: "Deletes the schedule and its fires; it fires no more. A run in progress goes on; queued fires are dropped.",
			replies:     []reply{{status: http.StatusNoContent, description: "The schedule was deleted."}},
			failures:    []failure{notFound},
		}},
	}
}
