package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agcore/agcore/toolsys"
)

// The stores the memory tools reach, as their store parameter names them.
const (
	// MemorySession is the session's key-value memory: short notes kept
	// across the session's turns, shown in its system prompt.
	MemorySession = "session"
	// MemoryKnowledge is the knowledge base: pages kept across sessions
	// and found by keyword search.
	MemoryKnowledge = "knowledge"
)

// ErrMemoryNotFound is wrapped by a MemoryNotes or MemoryPages error for a
// key or page that does not exist.
var ErrMemoryNotFound = errors.New("memory: not found")

// MemoryNotes is the session key-value memory as the memory tools use it.
// Implementations must be safe for concurrent use.
type MemoryNotes interface {
	// Get returns the value of key in session, or an error wrapping
	// ErrMemoryNotFound.
	Get(ctx context.Context, session, key string) (string, error)
	// Set stores value under key in session, replacing any value.
	Set(ctx context.Context, session, key, value string) error
	// Delete removes key from session; a missing key is not an error.
	Delete(ctx context.Context, session, key string) error
	// List returns the notes of session, by key.
	List(ctx context.Context, session string) ([]MemoryNote, error)
}

// MemoryNote is one session note.
type MemoryNote struct {
	Key   string
	Value string
}

// MemoryPages is the knowledge base as the memory tools use it. Writes go
// through the base's own rules (validation, eviction). Implementations
// must be safe for concurrent use.
type MemoryPages interface {
	// Get returns the page with id, or an error wrapping ErrMemoryNotFound.
	Get(ctx context.Context, id string) (MemoryPage, error)
	// Put creates or replaces the page p.ID and returns it as stored.
	Put(ctx context.Context, p MemoryPage) (MemoryPage, error)
	// Delete removes the page; a missing page is not an error.
	Delete(ctx context.Context, id string) error
	// Search returns at most limit pages whose id starts with prefix
	// ("" for any) that match query, best first, and counts them as
	// recalled.
	Search(ctx context.Context, query, prefix string, limit int) ([]MemoryHit, error)
}

// MemoryPage is a knowledge page as the memory tools see it.
type MemoryPage struct {
	ID      string
	Title   string
	Content string
	Tags    []string
	Updated time.Time
}

// MemoryHit is a page found by a search, with its score in [0, 1].
type MemoryHit struct {
	Page  MemoryPage
	Score float64
}

// MemoryScope says whose knowledge pages the memory tools reach.
type MemoryScope int

// The scopes.
const (
	// ScopeAgent gives each agent profile pages of its own: a page is
	// stored under "<agent>:<key>" and tagged "agent:<agent>", and an
	// agent's memory tools neither read, search nor delete another
	// agent's pages. It is the default.
	ScopeAgent MemoryScope = iota
	// ScopeShared gives every agent the same pages, stored under their
	// key as is (so pages added with `agcore knowledge add` are read by
	// their id).
	ScopeShared
)

// String returns "agent" or "shared".
func (s MemoryScope) String() string {
	switch s {
	case ScopeAgent:
		return "agent"
	case ScopeShared:
		return "shared"
	}
	return fmt.Sprintf("MemoryScope(%d)", int(s))
}

// ParseMemoryScope parses the names String returns; "" is ScopeAgent.
func ParseMemoryScope(s string) (MemoryScope, error) {
	switch s {
	case "", "agent":
		return ScopeAgent, nil
	case "shared":
		return ScopeShared, nil
	}
	return 0, fmt.Errorf("unknown memory scope %q (want agent or shared)", s)
}

// MemoryOptions configures the memory tools. The zero value gives tools
// that reach no store; set Notes, Pages or both.
type MemoryOptions struct {
	// Notes is the session key-value memory. Nil means the session store
	// is not offered.
	Notes MemoryNotes
	// Pages is the knowledge base. Nil means the knowledge store is not
	// offered.
	Pages MemoryPages
	// Scope says whose pages an agent reaches. The zero value is
	// ScopeAgent. Session notes belong to their session whatever the
	// scope: every agent of the session sees them in its prompt.
	Scope MemoryScope
	// MaxValueBytes caps what memory_write stores in one note or page.
	// Zero means 64 KiB.
	MaxValueBytes int
	// MaxResults is the number of results memory_search returns when the
	// call names none. Zero means 10.
	MaxResults int
}

// Defaults of MemoryOptions.
const (
	DefaultMemoryValueBytes = 64 << 10
	DefaultMemoryResults    = 10
	// MaxMemoryResults is the most results one memory_search may ask for.
	MaxMemoryResults = 50
)

func (o MemoryOptions) withDefaults() MemoryOptions {
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = DefaultMemoryValueBytes
	}
	if o.MaxResults <= 0 {
		o.MaxResults = DefaultMemoryResults
	}
	o.MaxResults = min(o.MaxResults, MaxMemoryResults)
	return o
}

// memory is what the four memory tools share.
type memory struct {
	o MemoryOptions
}

// storesText names the stores, for descriptions and errors.
const storesText = `"session" (notes of this session, shown in your system prompt) and "knowledge" (pages kept across sessions, found by search)`

// check refuses a store that is not offered, and a call without the
// session or the agent it needs.
func (m *memory) check(store string, tc *toolsys.Context) error {
	switch store {
	case MemorySession:
		if m.o.Notes == nil {
			return errors.New("the session store is not available to this agent's memory tools")
		}
		if tc.SessionID == "" {
			return errors.New("the session store needs a session, and this call has none")
		}
	case MemoryKnowledge:
		if m.o.Pages == nil {
			return errors.New("the knowledge store is not enabled (knowledge.enabled in the configuration)")
		}
		if m.o.Scope == ScopeAgent {
			if tc.Agent == "" {
				return errors.New("knowledge pages are kept per agent, and this call names no agent")
			}
			if strings.ContainsAny(tc.Agent, ":/") {
				return fmt.Errorf("knowledge pages are kept per agent, and the agent name %q holds ':' or '/'", tc.Agent)
			}
		}
	default:
		return fmt.Errorf("unknown store %q; the stores are %s", store, storesText)
	}
	return nil
}

// prefix is the id prefix of the calling agent's pages, "" when shared.
func (m *memory) prefix(tc *toolsys.Context) string {
	if m.o.Scope == ScopeShared {
		return ""
	}
	return tc.Agent + ":"
}

// pageID is the id of the page key names for the caller.
func (m *memory) pageID(tc *toolsys.Context, key string) string { return m.prefix(tc) + key }

// keyOf is the key a caller names page id by.
func (m *memory) keyOf(tc *toolsys.Context, id string) string {
	return strings.TrimPrefix(id, m.prefix(tc))
}
