package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SearXNGConfig configures a SearXNG backend.
type SearXNGConfig struct {
	// URL is the instance's root ("https://searx.example.org"); searches
	// go to its /search endpoint with format=json, which the instance
	// must enable (search.formats in its settings.yml). Required.
	URL string
	// Language is the language of the results ("en", "de-CH"). Empty
	// means the instance's default.
	Language string
	// HTTPClient sends the requests. Nil means a client with
	// http.DefaultTransport. Its redirect policy is replaced: a redirect
	// to another host is refused.
	HTTPClient *http.Client
	// Timeout bounds one search. Zero means DefaultTimeout.
	Timeout time.Duration
}

// SearXNG searches a SearXNG instance, or any service that answers its
// JSON API (/search?q=...&format=json).
type SearXNG struct {
	c    *client
	lang string
}

var _ Backend = (*SearXNG)(nil)

// NewSearXNG returns a SearXNG backend; it fails when cfg.URL is not an
// absolute http or https URL.
func NewSearXNG(cfg SearXNGConfig) (*SearXNG, error) {
	c, err := newClient("searxng", "URL", cfg.URL, cfg.HTTPClient, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	return &SearXNG{c: c, lang: cfg.Language}, nil
}

// Name returns "searxng".
func (*SearXNG) Name() string { return "searxng" }

// Host returns the instance's host.
func (s *SearXNG) Host() string { return s.c.base.Host }

// Search asks the instance's /search endpoint for q.Text, in JSON. It
// sends the query text, the format, the first page and the configured
// language: nothing else.
func (s *SearXNG) Search(ctx context.Context, q Query) ([]Result, error) {
	u := *s.c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/search"
	v := url.Values{"q": {q.Text}, "format": {"json"}, "pageno": {"1"}}
	if s.lang != "" {
		v.Set("language", s.lang)
	}
	u.RawQuery = v.Encode()
	body, err := s.c.get(ctx, &u, nil, nil)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) && se.Status == http.StatusForbidden {
			se.Detail = "the instance refuses JSON; enable the json format (search.formats in its settings.yml)"
		}
		return nil, err
	}
	return DecodeSearXNG(body, q.Count)
}

// searxngResponse is the part of SearXNG's JSON answer that is read.
type searxngResponse struct {
	Results *[]struct {
		URL     string `json:"url"`
		Title   string `json:"title"`
		Content string `json:"content"`
	} `json:"results"`
}

// DecodeSearXNG decodes a SearXNG JSON answer into at most limit results
// (all of them when limit <= 0), skipping results without a URL. A body
// that is not a JSON object with a results array is an error wrapping
// ErrBadResponse.
func DecodeSearXNG(body []byte, limit int) ([]Result, error) {
	var r searxngResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%w: searxng: %v", ErrBadResponse, err)
	}
	if r.Results == nil {
		return nil, fmt.Errorf("%w: searxng: the answer has no results array", ErrBadResponse)
	}
	out := make([]Result, 0, min(len(*r.Results), max(limit, 0)))
	for _, it := range *r.Results {
		if limit > 0 && len(out) == limit {
			break
		}
		if res, ok := result(it.Title, it.URL, it.Content); ok {
			out = append(out, res)
		}
	}
	return out, nil
}

// result makes a Result of a service's fields; ok is false without a
// usable URL.
func result(title, link, snippet string) (Result, bool) {
	link = strings.TrimSpace(link)
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Result{}, false
	}
	t := plain(title)
	if t == "" {
		t = link
	}
	return Result{Title: clip(t, 300), URL: link, Snippet: clip(plain(snippet), 1000)}, true
}
