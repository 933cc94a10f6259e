package httpapi

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// Listing bounds of GET /v1/sessions.
const (
	defaultListLimit = 100
	maxListLimit     = 1000
)

// CreateSessionRequest is the body of POST /v1/sessions. Both fields are
// optional.
type CreateSessionRequest struct {
	// ID is the new session's id: at most 512 bytes, without '/' or NUL.
	// Empty means a random id.
	ID string `json:"id"`
	// Agent is the session's agent profile. Empty means the runtime's
	// default agent.
	Agent string `json:"agent"`
}

// SessionStatus is the body of GET /v1/sessions/{id} and of a created
// session.
type SessionStatus struct {
	ID    string `json:"id"`
	Agent string `json:"agent"`
	// Status is "idle", or "running" while a turn runs.
	Status string `json:"status" jsonschema:"enum=idle,enum=running"`
	// Turn is the running turn's index, or the next turn's when idle.
	Turn     int            `json:"turn"`
	TurnID   string         `json:"turn_id,omitempty"`
	Queued   int            `json:"queued"`
	Messages int            `json:"messages"`
	Usage    messages.Usage `json:"usage"`
	Cost     float64        `json:"cost"`
	// PendingApprovals counts the tool calls waiting for approval.
	PendingApprovals int `json:"pending_approvals"`
}

// SessionSummary is one entry of GET /v1/sessions.
type SessionSummary struct {
	ID string `json:"id"`
	// Active reports whether the session's actor runs now (it has been
	// used recently); an inactive session is activated by its next use.
	Active bool `json:"active"`
	// Agent, Turns, Usage, Cost and Updated are read from the session's
	// journal, without activating it; they are absent for a session
	// that has journaled nothing yet. Agent is "" for the default agent.
	Agent   string          `json:"agent,omitempty"`
	Turns   int             `json:"turns,omitempty"`
	Usage   *messages.Usage `json:"usage,omitempty"`
	Cost    float64         `json:"cost,omitempty"`
	Updated *time.Time      `json:"updated,omitempty"`
}

// SessionList is the body of GET /v1/sessions.
type SessionList struct {
	Sessions []SessionSummary `json:"sessions"`
	// Next, when not empty, is the "after" parameter of the next page.
	Next string `json:"next,omitempty"`
}

func statusOf(st actors.Status, approvals []actors.PendingApproval) SessionStatus {
	out := SessionStatus{
		ID: st.Session, Agent: st.Agent, Status: "idle", Turn: st.NextTurn, Queued: st.Queued,
		Messages: st.Messages, Usage: st.Usage, Cost: st.Cost,
		PendingApprovals: len(approvals),
	}
	if st.Running {
		out.Status, out.Turn, out.TurnID = "running", st.Turn, st.TurnID
	}
	return out
}

// sessionID returns the {id} of the path, validated.
func sessionID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if err := memory.ValidateSession(id); err != nil {
		return "", &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: "invalid session id: " + err.Error(), Err: err}
	}
	return id, nil
}

// exists reports whether session id has a journal. rt.Open would create
// any session; the API creates sessions only through POST /v1/sessions.
func (s *Server) exists(r *http.Request, id string) error {
	tail, err := s.journal.Tail(r.Context(), id)
	if err != nil {
		return err
	}
	if tail == 0 {
		return apiErr(http.StatusNotFound, CodeSessionNotFound, "session %q does not exist; create it with POST /v1/sessions", id)
	}
	return nil
}

// open returns a handle on the existing session named by the path,
// activating it.
func (s *Server) open(r *http.Request) (*actors.Session, error) {
	id, err := sessionID(r)
	if err != nil {
		return nil, err
	}
	s.sessMu.RLock()
	defer s.sessMu.RUnlock()
	if err := s.exists(r, id); err != nil {
		return nil, err
	}
	sess, err := s.rt.Open(r.Context(), id)
	if err != nil {
		return nil, runtimeError(err)
	}
	return sess, nil
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	var req CreateSessionRequest
	if err := decodeBody(r, &req, true); err != nil {
		writeError(w, err)
		return
	}
	if req.ID == "" {
		req.ID = newSessionID()
	} else if err := memory.ValidateSession(req.ID); err != nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: "invalid session id: " + err.Error(), Err: err})
		return
	}
	if req.Agent != "" && len(s.cfg.Agents) > 0 && !slices.Contains(s.cfg.Agents, req.Agent) {
		writeError(w, apiErr(http.StatusBadRequest, CodeBadRequest, "unknown agent %q (agents: %v)", req.Agent, s.cfg.Agents))
		return
	}
	st, err := s.create(r, req)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Location", "/v1/sessions/"+req.ID)
	writeJSON(w, http.StatusCreated, statusOf(st, nil))
}

func (s *Server) create(r *http.Request, req CreateSessionRequest) (actors.Status, error) {
	ctx := r.Context()
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	tail, err := s.journal.Tail(ctx, req.ID)
	if err != nil {
		return actors.Status{}, err
	}
	if tail > 0 {
		return actors.Status{}, apiErr(http.StatusConflict, CodeSessionExists, "session %q already exists", req.ID)
	}
	sess, err := s.rt.Open(ctx, req.ID)
	if err != nil {
		return actors.Status{}, runtimeError(err)
	}
	if req.Agent != "" {
		if err := sess.SwitchAgent(ctx, req.Agent); err != nil {
			return actors.Status{}, runtimeError(err)
		}
	}
	st, err := sess.Status(ctx)
	if err != nil {
		return actors.Status{}, runtimeError(err)
	}
	return st, nil
}

func newSessionID() string {
	var b [9]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "s-" + hex.EncodeToString(b[:])
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := defaultListLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			writeError(w, apiErr(http.StatusBadRequest, CodeBadRequest, "limit must be an integer from 1 to %d, got %q", maxListLimit, v))
			return
		}
		limit = n
	}
	after := q.Get("after")
	active := s.rt.Sessions()
	// Sessions activated but not yet journaled are listed too.
	ids := slices.Clone(active)
	for id, err := range s.journal.Sessions(r.Context()) {
		if err != nil {
			writeError(w, err)
			return
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	start, _ := slices.BinarySearch(ids, after)
	if start < len(ids) && ids[start] == after {
		start++
	}
	ids = ids[start:]
	out := SessionList{Sessions: make([]SessionSummary, 0, min(len(ids), limit))}
	for _, id := range ids[:min(len(ids), limit)] {
		sum := SessionSummary{ID: id, Active: slices.Contains(active, id)}
		st, err := s.journal.Load(r.Context(), id)
		switch {
		case errors.Is(err, memory.ErrNotFound):
		case err != nil:
			// A damaged journal is listed; reading it says what is wrong.
			s.log.Debug().Err(err).Str("session", id).Msg("listing a session")
		default:
			updated := st.Updated
			sum.Agent, sum.Turns, sum.Usage, sum.Cost, sum.Updated = st.Agent, st.Turn, &st.Usage, st.Cost, &updated
		}
		out.Sessions = append(out.Sessions, sum)
	}
	if len(ids) > limit {
		out.Next = ids[limit-1]
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	sess, err := s.open(r)
	if err != nil {
		writeError(w, err)
		return
	}
	st, err := sess.Status(r.Context())
	if err != nil {
		writeError(w, runtimeError(err))
		return
	}
	approvals, err := sess.Approvals(r.Context())
	if err != nil {
		writeError(w, runtimeError(err))
		return
	}
	writeJSON(w, http.StatusOK, statusOf(st, approvals))
}

// handleDelete deletes a session through the runtime: a running turn is
// cancelled (its streams end with turn_ended, outcome cancelled), the
// session's actor stops, and its journal and session memory are removed.
func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	id, err := sessionID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	if err := s.rt.Delete(r.Context(), id); err != nil {
		if errors.Is(err, actors.ErrSessionNotFound) {
			err = apiErr(http.StatusNotFound, CodeSessionNotFound, "session %q does not exist", id)
		}
		writeError(w, runtimeError(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// runtimeError maps a runtime error to an API error; an API error is
// returned as is.
func runtimeError(err error) error {
	if _, ok := errors.AsType[*Error](err); ok {
		return err
	}
	code, status := "", 0
	switch {
	case errors.Is(err, actors.ErrSessionBusy):
		code, status = CodeSessionBusy, http.StatusConflict
	case errors.Is(err, actors.ErrClosed):
		code, status = CodeShuttingDown, http.StatusServiceUnavailable
	case errors.Is(err, actors.ErrUnknownAgent):
		code, status = CodeBadRequest, http.StatusBadRequest
	case errors.Is(err, actors.ErrTurnNotFound):
		code, status = CodeTurnNotFound, http.StatusNotFound
	case errors.Is(err, actors.ErrSessionNotFound), errors.Is(err, actors.ErrSessionDeleted):
		code, status = CodeSessionNotFound, http.StatusNotFound
	case errors.Is(err, actors.ErrUnknownApproval):
		code, status = CodeApprovalNotFound, http.StatusNotFound
	case errors.Is(err, actors.ErrSessionStopped):
		code, status = CodeSessionStopped, http.StatusServiceUnavailable
	case errors.Is(err, actors.ErrSlowSubscriber):
		code, status = CodeSlowSubscriber, http.StatusServiceUnavailable
	case errors.Is(err, memory.ErrInvalidSession), errors.Is(err, actors.ErrConfig):
		code, status = CodeBadRequest, http.StatusBadRequest
	default:
		return err
	}
	return &Error{Status: status, Code: code, Message: cmp.Or(trimPrefix(err.Error()), code), Err: err}
}

// trimPrefix drops the package prefix of a runtime error's text.
func trimPrefix(msg string) string {
	for _, p := range []string{"actors: ", "memory: "} {
		if len(msg) > len(p) && msg[:len(p)] == p {
			return msg[len(p):]
		}
	}
	return msg
}
