package httpapi

import (
	"net/http"
	"time"

	"github.com/agcore/agcore/toolsys/mcp"
)

// AuthorizationLister lists the MCP authorizations waiting for a user.
// *mcp.PendingAuthorizer implements it. Implementations must be safe for
// concurrent use.
type AuthorizationLister interface {
	// Pending returns the authorizations waiting, in a stable order.
	Pending() []mcp.PendingAuthorization
}

// PendingMCPAuthorization is an MCP server that waits for a user to
// authorize agcore in a browser.
type PendingMCPAuthorization struct {
	// Server is the MCP server's configured name.
	Server string `json:"server"`
	// URL is the authorization URL to open in a browser.
	URL string `json:"url"`
	// RedirectURL is where the authorization server sends the browser
	// back: a listener on the loopback interface of the serving machine,
	// so the browser must run there (or reach that port through a
	// forwarded port).
	RedirectURL string `json:"redirect_url"`
	// Started is when the authorization began.
	Started time.Time `json:"started"`
	// Expires is when the listener stops waiting; the connection attempt
	// then fails and is retried, with a new URL, within its retry limit.
	Expires time.Time `json:"expires,omitzero"`
}

// MCPAuthorizationList is the body of GET /v1/mcp/authorizations.
type MCPAuthorizationList struct {
	Authorizations []PendingMCPAuthorization `json:"authorizations"`
}

func (s *Server) handleListMCPAuthorizations(w http.ResponseWriter, _ *http.Request) {
	out := MCPAuthorizationList{Authorizations: []PendingMCPAuthorization{}}
	if s.cfg.MCPAuthorizations != nil {
		for _, p := range s.cfg.MCPAuthorizations.Pending() {
			out.Authorizations = append(out.Authorizations, PendingMCPAuthorization{
				Server: p.Server, URL: p.URL, RedirectURL: p.RedirectURL, Started: p.Started, Expires: p.Expires,
			})
		}
	}
	writeJSON(w, http.StatusOK, out)
}
