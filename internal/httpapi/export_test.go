package httpapi

import "net/http"

// MatchedPattern returns the ServeMux pattern that serves r, "/" for the
// fallback of unmatched requests.
func (s *Server) MatchedPattern(r *http.Request) string {
	_, p := s.mux.Handler(r)
	return p
}

// RoutePatterns returns the patterns of the routes the server registers.
func RoutePatterns() []string {
	var out []string
	for _, rt := range routeTable() {
		out = append(out, rt.pattern())
	}
	return out
}
