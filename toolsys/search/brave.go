package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// DefaultBraveURL is the Brave Search API's web search endpoint.
const DefaultBraveURL = "https://api.search.brave.com/res/v1/web/search"

// BraveMaxCount is the most results Brave returns for one request.
const BraveMaxCount = 20

// BraveConfig configures a Brave Search backend.
type BraveConfig struct {
	// APIKey is the subscription token, sent in the X-Subscription-Token
	// header and nowhere else. Required.
	APIKey string
	// URL is the web search endpoint. Empty means DefaultBraveURL (tests
	// point it at a local server).
	URL string
	// Country is the country results come from ("us", "de"). Empty means
	// Brave's default.
	Country string
	// HTTPClient sends the requests. Nil means a client with
	// http.DefaultTransport. Its redirect policy is replaced: a redirect
	// to another host is refused.
	HTTPClient *http.Client
	// Timeout bounds one search. Zero means DefaultTimeout.
	Timeout time.Duration
}

// Brave searches with the Brave Search API.
type Brave struct {
	c       *client
	key     string
	country string
}

var _ Backend = (*Brave)(nil)

// NewBrave returns a Brave backend; it fails without an API key or with
// a URL that is not an absolute http or https URL.
func NewBrave(cfg BraveConfig) (*Brave, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("search: brave: the API key is empty")
	}
	raw := cfg.URL
	if raw == "" {
		raw = DefaultBraveURL
	}
	c, err := newClient("brave", "URL", raw, cfg.HTTPClient, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	return &Brave{c: c, key: cfg.APIKey, country: cfg.Country}, nil
}

// Name returns "brave".
func (*Brave) Name() string { return "brave" }

// Host returns the API's host.
func (b *Brave) Host() string { return b.c.base.Host }

// Search asks the API for q.Text. It sends the query text, the count, the
// configured country and the API key (in its header): nothing else.
func (b *Brave) Search(ctx context.Context, q Query) ([]Result, error) {
	u := *b.c.base
	v := url.Values{"q": {q.Text}, "count": {strconv.Itoa(min(max(q.Count, 1), BraveMaxCount))}}
	if b.country != "" {
		v.Set("country", b.country)
	}
	u.RawQuery = v.Encode()
	body, err := b.c.get(ctx, &u, http.Header{"X-Subscription-Token": {b.key}}, braveDetail)
	if err != nil {
		return nil, err
	}
	return DecodeBrave(body, q.Count)
}

// braveResponse is the part of Brave's JSON answer that is read.
type braveResponse struct {
	Type string `json:"type"`
	Web  *struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
		} `json:"results"`
	} `json:"web"`
}

// braveError is Brave's JSON error body.
type braveError struct {
	Error struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	} `json:"error"`
}

// braveDetail returns the message of a Brave error body, "" when the body
// is not one.
func braveDetail(body []byte) string {
	var e braveError
	if json.Unmarshal(body, &e) != nil || e.Error.Detail == "" {
		return ""
	}
	if e.Error.Code != "" {
		return e.Error.Code + ": " + e.Error.Detail
	}
	return e.Error.Detail
}

// DecodeBrave decodes a Brave web search answer into at most limit
// results (all of them when limit <= 0), skipping results without a URL.
// An answer without web results (none found) is an empty list; a body that
// is not a JSON object of type "search" is an error wrapping
// ErrBadResponse.
func DecodeBrave(body []byte, limit int) ([]Result, error) {
	var r braveResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%w: brave: %v", ErrBadResponse, err)
	}
	if r.Type != "search" {
		return nil, fmt.Errorf("%w: brave: the answer is of type %q, not \"search\"", ErrBadResponse, r.Type)
	}
	if r.Web == nil {
		return []Result{}, nil
	}
	out := make([]Result, 0, min(len(r.Web.Results), max(limit, 0)))
	for _, it := range r.Web.Results {
		if limit > 0 && len(out) == limit {
			break
		}
		if res, ok := result(it.Title, it.URL, it.Description); ok {
			out = append(out, res)
		}
	}
	return out, nil
}
