package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// Health is the body of /healthz and /readyz.
type Health struct {
	// Status is "ok". A server that is shutting down answers /readyz
	// with an error instead.
	Status string `json:"status" jsonschema:"enum=ok"`
}

// History is the body of GET /v1/sessions/{id}/history.
type History struct {
	Session string `json:"session"`
	// Turns is the number of turns started.
	Turns int `json:"turns"`
	// Messages is the conversation as the model saw it: user, assistant
	// and tool messages, summaries of compacted parts included. A call
	// cut off by a cancellation or a crash is answered as interrupted, as
	// the model was told; a call of the turn still running has no answer
	// yet.
	Messages []messages.Message `json:"messages"`
}

// SessionUsage is the body of GET /v1/sessions/{id}/usage.
type SessionUsage struct {
	Session string         `json:"session"`
	Usage   messages.Usage `json:"usage"`
	Cost    float64        `json:"cost"`
}

// handleHealth answers while the process serves requests at all.
func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, Health{Status: "ok"})
}

// handleReady answers 503 once Shutdown has started, so that a load
// balancer stops sending requests.
func (s *Server) handleReady(w http.ResponseWriter, _ *http.Request) {
	if s.isClosing() {
		writeError(w, apiErr(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down"))
		return
	}
	writeJSON(w, http.StatusOK, Health{Status: "ok"})
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	g := gauges{
		streams:   s.streams.Load(),
		inFlight:  s.inFlight.Load(),
		approvals: len(s.rt.Approvals()),
	}
	var runtime *metricdata.ResourceMetrics
	if s.cfg.MetricsReader != nil {
		runtime = &metricdata.ResourceMetrics{}
		if err := s.cfg.MetricsReader.Collect(r.Context(), runtime); err != nil {
			writeError(w, apiErr(http.StatusInternalServerError, CodeInternal, "collecting the runtime's metrics: %v", err))
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if err := s.metrics.write(w, g, runtime); err != nil {
		s.log.Debug().Err(err).Msg("writing metrics")
	}
}

// handleUsage answers the runtime's usage and cost by model since it
// started.
func (s *Server) handleUsage(w http.ResponseWriter, _ *http.Request) {
	snap := s.rt.Usage()
	if snap.Models == nil {
		snap.Models = map[string]providers.ModelUsage{}
	}
	writeJSON(w, http.StatusOK, snap)
}

func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	id, err := sessionID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	st, err := s.journal.Load(r.Context(), id)
	if errors.Is(err, memory.ErrNotFound) {
		err = apiErr(http.StatusNotFound, CodeSessionNotFound, "session %q does not exist; create it with POST /v1/sessions", id)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	// As the model saw it: a call cut off by a cancellation or a crash is
	// answered as interrupted; a call of the turn still running has no
	// answer yet.
	msgs := st.Messages(memory.ViewOptions{KeepPending: true})
	writeJSON(w, http.StatusOK, History{Session: id, Turns: st.Turn, Messages: msgs})
}

func (s *Server) handleSessionUsage(w http.ResponseWriter, r *http.Request) {
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
	writeJSON(w, http.StatusOK, SessionUsage{Session: st.Session, Usage: st.Usage, Cost: st.Cost})
}

func quote(s string) string { return strconv.Quote(s) }
