package httpapi

// This file holds GET /v1/runtime/tree, the live supervision tree of the
// runtime.

import (
	"net/http"

	"github.com/agcore/agcore/actors"
)

// treeRoutes returns the route of the runtime's supervision tree.
func treeRoutes() []route {
	return []route{
		{http.MethodGet, "/v1/runtime/tree", (*Server).handleTree, operation{
			id: "getRuntimeTree", tag: tagOperations,
			summary: "Live actor tree",
			description: "A read-only snapshot of the runtime's supervision tree: the sessions whose actor runs " +
				"(idle, running a turn or stopping) with their model and tool calls in flight, pending approvals " +
				"and running sub-agents nested under them; the stored sessions that are passivated (up to 200); " +
				"and the service actors (compactor, retriever, MCP connections with their state, scheduler). " +
				"Each actor carries the count of its restarts by its supervisor. Taking it does not activate " +
				"a session nor keep one from passivating.",
			replies: []reply{{status: http.StatusOK, description: "The tree.", json: actors.Tree{}}},
			failures: []failure{{http.StatusServiceUnavailable, "The runtime is shutting down.",
				[]string{CodeShuttingDown}}},
		}},
	}
}

func (s *Server) handleTree(w http.ResponseWriter, r *http.Request) {
	tree, err := s.rt.Tree(r.Context())
	if err != nil {
		writeError(w, runtimeError(err))
		return
	}
	writeJSON(w, http.StatusOK, tree)
}
