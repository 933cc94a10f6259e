package search

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// ToolName is the name of the web search tool.
const ToolName = "web_search"

// Tool defaults.
const (
	// DefaultCount is the number of results a call gets when it names
	// none and ToolConfig.DefaultCount is zero.
	DefaultCount = 5
	// MaxCount is the most results one call may ask for.
	MaxCount = 20
	// MaxQueryBytes is the longest query.
	MaxQueryBytes = 400
)

// ToolConfig configures the web_search tool.
type ToolConfig struct {
	// Backend answers the searches. Required.
	Backend Backend
	// DefaultCount is the number of results of a call that names none.
	// Zero means DefaultCount; it is capped at MaxCount.
	DefaultCount int
}

// Params are web_search's arguments.
type Params struct {
	Query string `json:"query" jsonschema:"description=What to search the web for,minLength=1,maxLength=400"`
	Count int    `json:"count,omitempty" jsonschema:"description=Number of results (1 to 20). Default 5.,minimum=1,maximum=20"`
}

// WebSearch is the web_search tool: it sends the model's query to the
// configured backend and returns the results (title, URL and snippet,
// numbered). A failure of the service is an error result naming the
// backend; the registry masks any credential in it, as in every result.
type WebSearch struct {
	b     Backend
	count int
}

var _ toolsys.Typed[Params] = (*WebSearch)(nil)

// New returns web_search; it fails without a Backend.
func New(cfg ToolConfig) (*WebSearch, error) {
	if cfg.Backend == nil {
		return nil, errors.New("search: ToolConfig.Backend is nil")
	}
	n := cfg.DefaultCount
	if n <= 0 {
		n = DefaultCount
	}
	return &WebSearch{b: cfg.Backend, count: min(n, MaxCount)}, nil
}

// Tool returns web_search bridged into a toolsys.Tool.
func (t *WebSearch) Tool() toolsys.Tool { return toolsys.Bridge[Params](t) }

// Name returns "web_search".
func (*WebSearch) Name() string { return ToolName }

// Description tells the model what web_search does.
func (t *WebSearch) Description() string {
	return fmt.Sprintf("Search the web (through %s at %s). Returns numbered results with title, URL and a snippet; "+
		"fetch a page with web_fetch when the snippet is not enough. The query is sent to that service: "+
		"never put secrets or private data in it.", t.b.Name(), t.b.Host())
}

// Permission is PermReadOnly: a search changes nothing, and reaches only
// the configured service.
func (*WebSearch) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams is nil: queries reach a third party and its logs.
func (*WebSearch) SecretParams() []string { return nil }

// Precheck refuses a blank query.
func (*WebSearch) Precheck(p Params) error {
	if strings.TrimSpace(p.Query) == "" {
		return errors.New("query: empty")
	}
	return nil
}

// RuleSubject is the query, so that rules such as web_search(*internal*)
// match on it.
func (*WebSearch) RuleSubject(p Params, _ *toolsys.Context) string { return p.Query }

// Execute runs the search.
func (t *WebSearch) Execute(ctx context.Context, p Params, tc *toolsys.Context) (toolsys.Result, error) {
	n := p.Count
	if n <= 0 {
		n = t.count
	}
	n = min(n, MaxCount)
	q := strings.TrimSpace(p.Query)
	tc.Logger.Debug().Str("backend", t.b.Name()).Int("count", n).Msg("web search")
	results, err := t.b.Search(ctx, Query{Text: q, Count: n})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return toolsys.Result{}, fmt.Errorf("web_search: %w", err)
		}
		return toolsys.ErrorResult("web search failed: %v", err), nil
	}
	if len(results) > n {
		results = results[:n]
	}
	meta := map[string]any{"backend": t.b.Name(), "results": len(results)}
	if len(results) == 0 {
		return toolsys.Result{Content: fmt.Sprintf("no results for %q", q), Metadata: meta}, nil
	}
	var b strings.Builder
	urls := make([]string, len(results))
	for i, r := range results {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, r.Title, r.URL)
		if r.Snippet != "" {
			fmt.Fprintf(&b, "   %s\n", r.Snippet)
		}
		urls[i] = r.URL
	}
	meta["urls"] = urls
	return toolsys.Result{Content: b.String(), Metadata: meta}, nil
}
