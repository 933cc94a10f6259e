package httpapi

// This file holds GET /v1/usage/history, the usage and cost of the
// runtime over time, read from the session journals.

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/agcore/agcore/messages"
)

// defaultUsageSince is how far back GET /v1/usage/history reads when the
// request has no since parameter.
const defaultUsageSince = 7 * 24 * time.Hour

// maxUsageBuckets caps the buckets of one answer, so that since=0001-01-01
// with bucket=1h cannot ask for millions of them.
const maxUsageBuckets = 5000

// UsageHistory is the body of GET /v1/usage/history.
type UsageHistory struct {
	// Bucket is the width of a bucket, "1h" or "1d".
	Bucket string `json:"bucket"`
	// Since is the start of the first bucket: the since parameter rounded
	// down to the bucket's width, in UTC.
	Since time.Time `json:"since"`
	// Until is the end of the last bucket.
	Until time.Time `json:"until"`
	// Buckets holds every bucket from Since to Until, oldest first, empty
	// ones included, so that a chart's time axis is even.
	Buckets []UsageBucket `json:"buckets"`
	// Models is the list of the models that the buckets name, sorted.
	Models []string `json:"models"`
}

// UsageBucket is the usage of one interval of GET /v1/usage/history.
type UsageBucket struct {
	// Start is when the bucket begins; it ends where the next begins.
	Start time.Time `json:"start"`
	// Usage and Cost add up the model calls journaled in the bucket, of
	// every session and sub-agent.
	Usage messages.Usage `json:"usage"`
	Cost  float64        `json:"cost"`
	// Turns counts the turns that ended in the bucket, completed, failed,
	// stopped by a limit or cancelled.
	Turns int `json:"turns"`
	// Models splits Usage and Cost by the model that answered; a call
	// journaled without its model is counted under "".
	Models map[string]UsageModel `json:"models,omitempty"`
}

// UsageModel is what the calls to one model used and cost in a bucket.
type UsageModel struct {
	Usage messages.Usage `json:"usage"`
	Cost  float64        `json:"cost"`
	// Calls counts the model calls.
	Calls int `json:"calls"`
}

// usageHistoryRoutes returns the route of the usage history.
func usageHistoryRoutes() []route {
	return []route{
		{http.MethodGet, "/v1/usage/history", (*Server).handleUsageHistory, operation{
			id: "getUsageHistory", tag: tagUsage,
			summary: "Usage and cost over time",
			description: "Token usage, cost and turns per hour or per day, read from the journals of every " +
				"session and sub-agent (so it survives restarts), without activating a session. Usage and " +
				"cost are those of the model calls journaled in each bucket, by model; turns are those that " +
				"ended in it. Every bucket from since to now is listed, empty ones included.",
			query: []queryParam{
				{"bucket", "The width of a bucket.", map[string]any{
					"type": "string", "enum": []string{"1h", "1d"}, "default": "1h"}},
				{"since", "The start of the history, an RFC 3339 time; it is rounded down to the bucket's width. " +
					"Defaults to 7 days ago.", map[string]any{"type": "string", "format": "date-time"}},
			},
			replies: []reply{{status: http.StatusOK, description: "The usage over time.", json: UsageHistory{}}},
			failures: []failure{{http.StatusBadRequest, "bucket is not 1h or 1d, since is not an RFC 3339 time or " +
				"lies in the future, or the range holds more than 5000 buckets.", []string{CodeBadRequest}}},
		}},
	}
}

// usageRange is the period a request of GET /v1/usage/history asks for:
// n buckets of width from start.
type usageRange struct {
	name  string
	width time.Duration
	start time.Time
	n     int
}

// parseUsageRange reads the bucket and since parameters of q, at time now;
// a bad value is a 400 *Error naming the parameter.
func parseUsageRange(q url.Values, now time.Time) (usageRange, error) {
	now = now.UTC()
	r := usageRange{name: "1h", width: time.Hour}
	switch v := q.Get("bucket"); v {
	case "", "1h":
	case "1d":
		r.name, r.width = "1d", 24*time.Hour
	default:
		return r, apiErr(http.StatusBadRequest, CodeBadRequest, "bucket must be 1h or 1d, got %q", v)
	}
	since := now.Add(-defaultUsageSince)
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return r, apiErr(http.StatusBadRequest, CodeBadRequest, "since must be an RFC 3339 time such as 2026-01-02T15:04:05Z, got %q", v)
		}
		if t.After(now) {
			return r, apiErr(http.StatusBadRequest, CodeBadRequest, "since %q lies in the future", v)
		}
		since = t.UTC()
	}
	r.start = since.Truncate(r.width)
	// now.Sub saturates for a since centuries ago, so the count cannot
	// overflow.
	if d := now.Sub(r.start) / r.width; d >= maxUsageBuckets {
		return r, apiErr(http.StatusBadRequest, CodeBadRequest,
			"since %s with bucket %s spans more than %d buckets: pick a later since or bucket=1d",
			since.Format(time.RFC3339), r.name, maxUsageBuckets)
	}
	r.n = int(now.Sub(r.start)/r.width) + 1
	return r, nil
}

func (s *Server) handleUsageHistory(w http.ResponseWriter, r *http.Request) {
	rg, err := parseUsageRange(r.URL.Query(), time.Now())
	if err != nil {
		writeError(w, err)
		return
	}
	start, width, n := rg.start, rg.width, rg.n
	jr, ok := s.journal.(journalReader)
	if !ok {
		writeError(w, apiErr(http.StatusNotFound, CodeNotFound, "this server's journal cannot be read entry by entry"))
		return
	}
	out := UsageHistory{Bucket: rg.name, Since: start, Until: start.Add(time.Duration(n) * width),
		Buckets: make([]UsageBucket, n), Models: []string{}}
	for i := range out.Buckets {
		out.Buckets[i].Start = start.Add(time.Duration(i) * width)
	}
	models := map[string]bool{}
	for id, err := range s.journal.Sessions(r.Context()) {
		if err != nil {
			writeError(w, err)
			return
		}
		// A journal whose last entry precedes the period is not read.
		if st, err := s.journal.Load(r.Context(), id); err == nil && st.Updated.Before(start) {
			continue
		}
		for e, err := range jr.Read(r.Context(), id, 1) {
			if err != nil {
				// A damaged journal counts up to the damage; reading it
				// says what is wrong.
				s.log.Debug().Err(err).Str("session", id).Msg("reading usage history")
				break
			}
			at := e.Envelope.At.UTC()
			if at.Before(start) || !at.Before(out.Until) {
				continue
			}
			b := &out.Buckets[int(at.Sub(start)/width)]
			switch ev := e.Event.(type) {
			case messages.AssistantMessage:
				b.Usage = b.Usage.Add(ev.Usage)
				b.Cost += ev.Cost
				if b.Models == nil {
					b.Models = map[string]UsageModel{}
				}
				m := b.Models[ev.Model]
				m.Usage, m.Cost, m.Calls = m.Usage.Add(ev.Usage), m.Cost+ev.Cost, m.Calls+1
				b.Models[ev.Model] = m
				models[ev.Model] = true
			case messages.TurnCompleted, messages.TurnCancelled:
				b.Turns++
			}
		}
	}
	out.Models = slices.Sorted(maps.Keys(models))
	writeJSON(w, http.StatusOK, out)
}
