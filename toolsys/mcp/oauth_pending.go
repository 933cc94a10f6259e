package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// DefaultAuthorizationTimeout bounds the wait for a user to authorize when
// PendingAuthorizer.Timeout is zero.
const DefaultAuthorizationTimeout = 10 * time.Minute

// PendingAuthorization is an authorization waiting for a user: the URL to
// open in a browser, and how long the redirect listener waits.
type PendingAuthorization struct {
	// Server is the MCP server's configured name.
	Server string `json:"server"`
	// URL is the authorization URL to open in a browser.
	URL string `json:"url"`
	// RedirectURL is the loopback URL the browser is sent back to; the
	// browser must run on the machine of the listener (or reach it
	// through a forwarded port).
	RedirectURL string `json:"redirect_url"`
	// Started is when the authorization began.
	Started time.Time `json:"started"`
	// Expires is when the wait for the redirect ends.
	Expires time.Time `json:"expires"`
}

// PendingAuthorizer is the Authorizer of a server process, such as
// `agcore serve`: it receives the redirect as Loopback does (a listener on
// 127.0.0.1 open only while it waits), and lists the authorizations
// waiting for a user so that an API or a console can show them. An entry
// is removed when the redirect arrives, when the authorization fails, or
// when its context ends. There is at most one entry per server: a new
// authorization of a server replaces the one before. The zero value is
// ready to use; it is safe for concurrent use.
type PendingAuthorizer struct {
	// Loopback receives the redirect. Its Out and Open are used as they
	// are: nil Out prints nothing.
	Loopback LoopbackAuthorizer
	// Timeout bounds the wait for each authorization. Zero means
	// DefaultAuthorizationTimeout; a context with an earlier deadline
	// ends it sooner.
	Timeout time.Duration
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Logger receives one line per authorization waiting, with its URL.
	// The zero Logger discards it.
	Logger zerolog.Logger

	mu      sync.Mutex
	pending map[string]pendingEntry
	seq     uint64
	changed chan struct{}
}

// pendingEntry is one listed authorization and the call that owns it.
type pendingEntry struct {
	id uint64
	PendingAuthorization
}

var _ Authorizer = (*PendingAuthorizer)(nil)

// RedirectURL implements Authorizer with Loopback.
func (p *PendingAuthorizer) RedirectURL(ctx context.Context, server string) (string, error) {
	return p.Loopback.RedirectURL(ctx, server)
}

// Authorize implements Authorizer: it lists req as pending while Loopback
// waits for the redirect, for at most Timeout.
func (p *PendingAuthorizer) Authorize(ctx context.Context, req AuthorizationRequest) (AuthorizationResult, error) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultAuthorizationTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	started := p.now()
	expires, _ := ctx.Deadline()
	// Listed once the redirect listener is up, so that a user who opens
	// the URL at once finds the browser's way back open. Loopback calls
	// Listening on this goroutine, before it waits.
	listed := false
	var id uint64
	lb := p.Loopback
	lb.Listening = func() {
		id, listed = p.add(PendingAuthorization{Server: req.Server, URL: req.URL, RedirectURL: req.RedirectURL, Started: started, Expires: expires}), true
		p.Logger.Info().Str("mcp_server", req.Server).Str("url", req.URL).Time("expires", expires).
			Msg("mcp: server needs authorization: open the URL in a browser on this machine")
	}
	defer func() {
		if listed {
			p.remove(req.Server, id)
		}
	}()
	res, err := lb.Authorize(ctx, req)
	if err != nil {
		return AuthorizationResult{}, fmt.Errorf("mcp server %s: authorization: %w", req.Server, err)
	}
	return res, nil
}

// Pending lists the authorizations waiting for a user, by server name.
func (p *PendingAuthorizer) Pending() []PendingAuthorization {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]PendingAuthorization, 0, len(p.pending))
	for _, e := range p.pending {
		out = append(out, e.PendingAuthorization)
	}
	slices.SortFunc(out, func(a, b PendingAuthorization) int { return strings.Compare(a.Server, b.Server) })
	return out
}

// Changed returns a channel that is closed at the next change of the
// pending list. Take a new one after each change.
func (p *PendingAuthorizer) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.changed
}

// add lists a, replacing the entry of its server, and returns its id.
func (p *PendingAuthorizer) add(a PendingAuthorization) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = map[string]pendingEntry{}
	}
	p.seq++
	p.pending[a.Server] = pendingEntry{id: p.seq, PendingAuthorization: a}
	p.notify()
	return p.seq
}

// remove unlists the entry of server if it is still the one with id.
func (p *PendingAuthorizer) remove(server string, id uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.pending[server]; ok && e.id == id {
		delete(p.pending, server)
		p.notify()
	}
}

// notify wakes the watchers of Changed; the caller holds p.mu.
func (p *PendingAuthorizer) notify() {
	if p.changed != nil {
		close(p.changed)
	}
	p.changed = make(chan struct{})
}

func (p *PendingAuthorizer) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}
