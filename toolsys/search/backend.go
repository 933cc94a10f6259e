package search

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Backend runs web searches against one search service. Implementations
// must be safe for concurrent use.
type Backend interface {
	// Name names the backend in results and errors ("searxng", "brave").
	Name() string
	// Host is the host (and port, when not the scheme's) every request
	// goes to: the only one the backend reaches.
	Host() string
	// Search returns at most q.Count results, best first. A failure of
	// the service (a status that is not 2xx, a body that is not its JSON)
	// is an error that names the backend.
	Search(ctx context.Context, q Query) ([]Result, error)
}

// Query is one search.
type Query struct {
	// Text is what to search for.
	Text string
	// Count is the most results wanted, at least 1.
	Count int
}

// Result is one search result. Its fields are text from the web: untrusted,
// HTML tags removed and entities decoded.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

// Errors of the backends.
var (
	// ErrBadResponse is wrapped when a service answers 2xx with a body
	// that is not the JSON it documents.
	ErrBadResponse = errors.New("search: unexpected response")
	// ErrResponseTooLarge is wrapped when a response body passes
	// MaxResponseBytes.
	ErrResponseTooLarge = errors.New("search: response too large")
	// ErrRedirect is wrapped when a service redirects to another host.
	ErrRedirect = errors.New("search: redirect to another host refused")
)

// StatusError is a response whose status is not 2xx.
type StatusError struct {
	// Backend names the backend.
	Backend string
	// Status is the HTTP status code.
	Status int
	// Detail is the start of the body (or the service's own message),
	// at most 300 bytes.
	Detail string
}

// Error implements error.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s: the search service answered %d %s", e.Backend, e.Status, http.StatusText(e.Status))
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Limits of a request.
const (
	// MaxResponseBytes is the largest response body read.
	MaxResponseBytes = 2 << 20
	// DefaultTimeout bounds one search when the backend's Timeout is zero.
	DefaultTimeout = 15 * time.Second
	// maxDetail caps StatusError.Detail.
	maxDetail = 300
)

// client is the HTTP side shared by the backends: one host, a timeout, a
// capped body, redirects kept on the host.
type client struct {
	name    string
	base    *url.URL
	hc      *http.Client
	timeout time.Duration
}

// newClient checks rawURL (an absolute http or https URL) and prepares the
// client; field names the configuration field in errors.
func newClient(name, field, rawURL string, hc *http.Client, timeout time.Duration) (*client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("search: %s %s: %w", name, field, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("search: %s %s %q: want an absolute http or https URL", name, field, rawURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("search: %s %s: credentials in the URL are not allowed; use the API key setting", name, field)
	}
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport}
	}
	// A copy, so that the caller's client keeps its own redirect policy.
	own := *hc
	host := u.Host
	own.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != host {
			return fmt.Errorf("%w: %s to %s", ErrRedirect, name, req.URL.Host)
		}
		if len(via) >= 5 {
			return fmt.Errorf("%s: more than 5 redirects", name)
		}
		return nil
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &client{name: name, base: u, hc: &own, timeout: timeout}, nil
}

// get sends a GET to the URL with the query parameters and headers, and
// returns the body of a 2xx answer; detail extracts a service's own error
// message from an error body ("" when it has none).
func (c *client) get(ctx context.Context, u *url.URL, header http.Header, detail func([]byte) string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		// The error names the URL, which holds the query only (never a key).
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the response: %w", c.name, err)
	}
	if len(body) > MaxResponseBytes {
		return nil, fmt.Errorf("%w: %s sent more than %d bytes", ErrResponseTooLarge, c.name, MaxResponseBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		d := ""
		if detail != nil {
			d = detail(body)
		}
		if d == "" {
			d = string(body)
		}
		return nil, &StatusError{Backend: c.name, Status: resp.StatusCode, Detail: clip(oneLine(d), maxDetail)}
	}
	return body, nil
}

// tagRE matches an HTML tag.
var tagRE = regexp.MustCompile(`<[^<>]*>`)

// plain turns a snippet that may hold HTML (<strong>, &amp;) into plain
// text on one line.
func plain(s string) string {
	return oneLine(html.UnescapeString(tagRE.ReplaceAllString(s, "")))
}

// oneLine folds every run of white space into one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
