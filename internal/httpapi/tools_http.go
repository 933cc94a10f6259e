package httpapi

import (
	"cmp"
	"net/http"
	"slices"
	"time"
)

// ToolInfo is one tool of GET /v1/tools with its statistics.
type ToolInfo struct {
	Name string `json:"name"`
	// Source is where the tool comes from: builtin, mcp, wasm, runtime.
	Source   string `json:"source"`
	Calls    int64  `json:"calls"`
	Errors   int64  `json:"errors"`
	Timeouts int64  `json:"timeouts"`
	// MeanMS and MaxMS are the mean and longest call, in milliseconds.
	MeanMS float64 `json:"mean_ms"`
	MaxMS  float64 `json:"max_ms"`
}

// ToolList is the body of GET /v1/tools.
type ToolList struct {
	Tools []ToolInfo `json:"tools"`
}

func (s *Server) handleTools(w http.ResponseWriter, _ *http.Request) {
	out := ToolList{Tools: []ToolInfo{}}
	if s.cfg.Tools != nil {
		for name, st := range s.cfg.Tools.AllStats() {
			out.Tools = append(out.Tools, ToolInfo{
				Name: name, Source: string(st.Source), Calls: st.Calls, Errors: st.Errors, Timeouts: st.Timeouts,
				MeanMS: ms(st.AvgLatency()), MaxMS: ms(st.MaxLatency),
			})
		}
	}
	slices.SortFunc(out.Tools, func(a, b ToolInfo) int { return cmp.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, out)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
