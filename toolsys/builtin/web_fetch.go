package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html/charset"

	"github.com/agcore/agcore/toolsys"
)

// maxRedirects is how many redirects web_fetch follows.
const maxRedirects = 10

// WebFetchParams are web_fetch's arguments.
type WebFetchParams struct {
	URL      string `json:"url" jsonschema:"description=The http or https URL to fetch"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"description=Read at most this many bytes of the response body (never more than the configured limit),minimum=1"`
}

// WebFetch is the web_fetch tool: it fetches an http or https URL whose host
// the configured hosts (Options.FetchAllowedHosts), or the call's
// AllowedHosts, permit (on every redirect too), within a size and a time
// limit. HTML comes back as readable text, other text as it is;
// binary content is refused.
type WebFetch struct {
	client   *http.Client
	maxBytes int64
	timeout  time.Duration
	allowed  []string
}

// NewWebFetch returns web_fetch; it uses opts.HTTPClient, opts.FetchMaxBytes,
// opts.FetchTimeout and opts.FetchAllowedHosts.
func NewWebFetch(opts Options) *WebFetch {
	o := opts.withDefaults()
	return &WebFetch{client: o.HTTPClient, maxBytes: o.FetchMaxBytes, timeout: o.FetchTimeout, allowed: slices.Clone(o.FetchAllowedHosts)}
}

// Name returns "web_fetch".
func (*WebFetch) Name() string { return "web_fetch" }

// Description tells the model how to use web_fetch, and which hosts it
// may reach.
func (t *WebFetch) Description() string {
	d := "Fetch a web page or other text resource over http or https. HTML is converted to readable " +
		"text with links as text (url). Only permitted hosts can be reached; binary content is refused."
	switch {
	case slices.Contains(t.allowed, "*"):
		return d + " Any host is permitted."
	case len(t.allowed) > 0:
		return d + " Permitted hosts: " + strings.Join(t.allowed, ", ") + "."
	}
	return d
}

// Permission is PermReadOnly.
func (*WebFetch) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams is nil: URLs end up in logs and on other servers.
func (*WebFetch) SecretParams() []string { return nil }

// Idempotent is true: a GET has no effect.
func (*WebFetch) Idempotent() bool { return true }

// RuleSubject is the URL.
func (*WebFetch) RuleSubject(p WebFetchParams, _ *toolsys.Context) string { return p.URL }

// hostError is a URL refused by the scheme or host policy.
type hostError struct{ msg string }

func (e *hostError) Error() string { return e.msg }

// checkURL applies the scheme and host policy to u.
func checkURL(u *url.URL, allowed []string) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return &hostError{fmt.Sprintf("unsupported URL scheme %q: only http and https URLs are fetched", u.Scheme)}
	}
	host := u.Hostname()
	switch {
	case host == "":
		return &hostError{fmt.Sprintf("URL %q has no host", u.Redacted())}
	case len(allowed) == 0:
		return &hostError{fmt.Sprintf("outbound host not allowed: %s (no outbound hosts are permitted)", host)}
	case !hostAllowed(host, allowed):
		return &hostError{fmt.Sprintf("outbound host not allowed: %s (permitted: %s)", host, strings.Join(allowed, ", "))}
	}
	return nil
}

// Execute fetches the URL.
func (t *WebFetch) Execute(ctx context.Context, p WebFetchParams, tc *toolsys.Context) (toolsys.Result, error) {
	u, err := url.Parse(strings.TrimSpace(p.URL))
	if err != nil {
		return toolsys.ErrorResult("invalid URL %q: %v", p.URL, err), nil
	}
	if tc == nil {
		tc = &toolsys.Context{}
	}
	allowed := tc.AllowedHosts
	if len(allowed) == 0 {
		allowed = t.allowed
	}
	if err := checkURL(u, allowed); err != nil {
		return toolsys.ErrorResult("%v", err), nil
	}
	limit := t.maxBytes
	if p.MaxBytes > 0 {
		limit = min(p.MaxBytes, t.maxBytes)
	}

	client := *t.client
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return &hostError{fmt.Sprintf("stopped after %d redirects", maxRedirects)}
		}
		return checkURL(req.URL, allowed)
	}
	fctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return toolsys.ErrorResult("invalid URL %q: %v", p.URL, err), nil
	}
	req.Header.Set("User-Agent", "agcore-web-fetch/1")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		return t.fetchError(ctx, u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return t.fetchError(ctx, u, err)
	}
	truncated := int64(len(body)) > limit
	if truncated {
		body = body[:limit]
	}
	final := resp.Request.URL
	ctype := resp.Header.Get("Content-Type")
	if ctype == "" {
		ctype = http.DetectContentType(body)
	}
	media, _, _ := mime.ParseMediaType(ctype)
	meta := map[string]any{
		"url":          final.Redacted(),
		"status":       resp.StatusCode,
		"content_type": media,
		"bytes":        len(body),
		"truncated":    truncated,
	}
	if !isTextMedia(media) || isBinary(body) {
		r := toolsys.ErrorResult("refusing binary content (%s) from %s", ctype, final.Redacted())
		r.Metadata = meta
		return r, nil
	}
	text, err := decodeText(body, ctype)
	if err != nil {
		r := toolsys.ErrorResult("cannot decode the body of %s: %v", final.Redacted(), err)
		r.Metadata = meta
		return r, nil
	}
	if media == "text/html" || media == "application/xhtml+xml" {
		if text, err = htmlToText(strings.NewReader(text), final); err != nil {
			return toolsys.Result{}, fmt.Errorf("web_fetch: %w", err)
		}
	}
	if truncated {
		text += fmt.Sprintf("\n\n[body truncated at %d bytes]", limit)
	}
	tc.Logger.Debug().Str("url", final.Redacted()).Int("status", resp.StatusCode).Int("bytes", len(body)).Msg("web_fetch")
	if resp.StatusCode >= 400 {
		r := toolsys.ErrorResult("HTTP %s from %s\n%s", resp.Status, final.Redacted(), text)
		r.Metadata = meta
		return r, nil
	}
	return toolsys.Result{Content: text, Metadata: meta}, nil
}

// fetchError sorts a failed request: the caller's cancellation is a Go
// error; a refused redirect, the fetch timeout and network failures are
// results for the model.
func (t *WebFetch) fetchError(ctx context.Context, u *url.URL, err error) (toolsys.Result, error) {
	var he *hostError
	switch {
	case ctx.Err() != nil:
		return toolsys.Result{}, fmt.Errorf("web_fetch: %w", context.Cause(ctx))
	case errors.As(err, &he):
		return toolsys.ErrorResult("redirect refused: %v", he), nil
	case errors.Is(err, context.DeadlineExceeded):
		return toolsys.ErrorResult("fetching %s timed out after %s", u.Redacted(), t.timeout), nil
	}
	return toolsys.ErrorResult("fetching %s failed: %v", u.Redacted(), err), nil
}

// isTextMedia reports whether a media type is text web_fetch returns.
func isTextMedia(media string) bool {
	switch {
	case strings.HasPrefix(media, "text/"),
		strings.HasSuffix(media, "+json"), strings.HasSuffix(media, "+xml"):
		return true
	}
	switch media {
	case "application/json", "application/xml", "application/xhtml+xml", "application/javascript",
		"application/x-javascript", "application/ecmascript", "application/yaml", "application/x-yaml",
		"application/toml", "application/x-ndjson", "application/sql", "application/graphql":
		return true
	}
	return false
}

// decodeText converts body to UTF-8 from the charset a byte-order mark or
// the content type declares; otherwise a body that is valid UTF-8 is taken
// as such, and any other from the charset an HTML meta tag declares
// (windows-1252 when none).
func decodeText(body []byte, ctype string) (string, error) {
	enc, name, certain := charset.DetermineEncoding(body, ctype)
	if name == "utf-8" || enc == nil || (!certain && utf8.Valid(body)) {
		return strings.ToValidUTF8(string(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))), "\uFFFD"), nil
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return "", err
	}
	return string(out), nil
}
