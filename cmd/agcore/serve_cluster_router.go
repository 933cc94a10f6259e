package main

// This file holds the HTTP router of `agcore serve --cluster`: a request
// that names a session is served by the member that owns the session,
// here or, reverse-proxied, on the owner.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/memory"
)

// forwardedHeader marks a request that a member forwarded to the owner of
// its session; its value is the forwarding member's remote address. A
// request that carries it is never forwarded again.
const forwardedHeader = "X-Agcore-Forwarded"

// The error codes of the router's own answers (503).
const (
	// codeOwnerChanged: a forwarded request reached a member that no
	// longer owns the session, as it sees the cluster; the client retries.
	codeOwnerChanged = "owner_changed"
	// codeOwnerUnreachable: the owner of the session did not answer, or
	// no member is known to own it; the client retries.
	codeOwnerUnreachable = "owner_unreachable"
)

// retryAfter is the Retry-After of the router's 503 answers, in seconds:
// a membership refresh (500 ms by default) has passed by then.
const retryAfter = "1"

// guardProbePath is a path no endpoint of the API serves: the router asks
// the local server for it, with the headers of a request it is about to
// forward, so that the local server's host, origin, token and shutdown
// checks apply to the request first (an answer of 404 means they passed).
const guardProbePath = "/v1/cluster-forward-check"

// sessionOwners finds the member that owns a session and its HTTP API.
// *cluster.Member implements it; it must be safe for concurrent use.
type sessionOwners interface {
	// Owner returns the remote address of the member that owns session.
	Owner(session string) (string, error)
	// HTTPAddress returns the base URL of the HTTP API of the member at
	// remote address addr.
	HTTPAddress(ctx context.Context, addr string) (string, error)
}

// sessionRouter is the HTTP handler of a cluster member. A request whose
// path names a session (/v1/sessions/{id} and every path under it), and
// POST /v1/sessions, go to the member that owns the session: served by
// local when that is this member (self), otherwise reverse-proxied to the
// owner's HTTP API, once. Every other request is served by local.
type sessionRouter struct {
	local  http.Handler
	owners sessionOwners
	// self is this member's remote address.
	self string
	// maxBody bounds the body of POST /v1/sessions, which the router
	// reads to learn the session id; bodyTimeout bounds its reading.
	maxBody     int64
	bodyTimeout time.Duration
	// transport carries the forwarded requests; nil means
	// http.DefaultTransport.
	transport http.RoundTripper
	// newID returns the id of a session created without one.
	newID func() string
	log   zerolog.Logger
}

// ServeHTTP implements http.Handler.
func (rt *sessionRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions {
		// CORS preflights carry no credentials and name no session's
		// state: the local server answers them.
		rt.local.ServeHTTP(w, r)
		return
	}
	id, ok := sessionOfPath(r.URL)
	if !ok && r.Method == http.MethodPost && r.URL.Path == "/v1/sessions" {
		id, ok = rt.createdSession(w, r)
	}
	if !ok {
		rt.local.ServeHTTP(w, r)
		return
	}
	owner, err := rt.owners.Owner(id)
	if err != nil {
		unavailable(w, codeOwnerUnreachable, fmt.Sprintf("no member is known to own session %q yet: %v; retry", id, err))
		return
	}
	if owner == rt.self {
		rt.local.ServeHTTP(w, r)
		return
	}
	if from := r.Header.Get(forwardedHeader); from != "" {
		unavailable(w, codeOwnerChanged, fmt.Sprintf("session %q is now owned by member %s, not by this member "+
			"(%s), to which %s forwarded the request: its owner changed; retry", id, owner, rt.self, from))
		return
	}
	grant, ok := rt.checked(w, r)
	if !ok {
		return
	}
	base, err := rt.owners.HTTPAddress(r.Context(), owner)
	if err != nil {
		unavailable(w, codeOwnerUnreachable, fmt.Sprintf("the owner of session %q, member %s, did not say where its "+
			"HTTP API is: %v; retry", id, owner, err))
		return
	}
	target, err := url.Parse(base)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		unavailable(w, codeOwnerUnreachable, fmt.Sprintf("the owner of session %q, member %s, announces the HTTP "+
			"address %q, which is not an http:// or https:// URL", id, owner, base))
		return
	}
	rt.forward(w, r, id, owner, target, grant)
}

// checked applies the local server's host, origin, token and shutdown
// checks to r, which is about to be forwarded. When r fails them, it
// relays the local server's answer and returns false. Otherwise it returns
// the CORS grant (the Access-Control-Allow-Origin value) the local server
// gave, if any.
func (rt *sessionRouter) checked(w http.ResponseWriter, r *http.Request) (grant string, ok bool) {
	probe := r.Clone(r.Context())
	probe.Method = http.MethodGet
	probe.URL = &url.URL{Path: guardProbePath}
	probe.RequestURI = guardProbePath
	probe.Body, probe.ContentLength = http.NoBody, 0
	probe.Header.Del("Content-Type")
	probe.Header.Del("Content-Length")
	probe.TransferEncoding = nil
	rec := &bufferedResponse{header: http.Header{}}
	rt.local.ServeHTTP(rec, probe)
	if rec.status() == http.StatusNotFound {
		return rec.header.Get("Access-Control-Allow-Origin"), true
	}
	h := w.Header()
	for k, v := range rec.header {
		h[k] = v
	}
	w.WriteHeader(rec.status())
	_, _ = w.Write(rec.body.Bytes())
	return "", false
}

// bufferedResponse keeps a response in memory.
type bufferedResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.code == 0 {
		b.code = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// status returns the response's status code.
func (b *bufferedResponse) status() int {
	if b.code == 0 {
		return http.StatusOK
	}
	return b.code
}

// forward reverse-proxies r to the owner of session id at target. Event
// streams are flushed as they arrive. The owner sees a request of a
// program: no Origin or Sec-Fetch-* headers (this member has checked
// them), its own address as Host, the Authorization header as sent, and
// forwardedHeader.
func (rt *sessionRouter) forward(w http.ResponseWriter, r *http.Request, id, owner string, target *url.URL, grant string) {
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
			h := pr.Out.Header
			h.Del("Origin")
			for k := range h {
				if strings.HasPrefix(k, "Sec-Fetch-") {
					h.Del(k)
				}
			}
			h.Set(forwardedHeader, rt.self)
		},
		Transport:     rt.transport,
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if grant != "" {
				resp.Header.Set("Access-Control-Allow-Origin", grant)
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client went away
			}
			rt.log.Debug().Err(err).Str("session", id).Str("owner", owner).Msg("forwarding a request")
			unavailable(w, codeOwnerUnreachable, fmt.Sprintf("the owner of session %q, member %s at %s, did not "+
				"answer (%v); retry once the cluster has noticed", id, owner, target.Host, err))
		},
	}
	proxy.ServeHTTP(w, r)
}

// createdSession reads the body of POST /v1/sessions and returns the id of
// the session it creates, with the body put back for whoever serves the
// request. A body without an id gets one (rt.newID), written into it. It
// returns false when the body cannot be read or is not a JSON object with
// a valid id: the local server then answers as it does for any bad body.
func (rt *sessionRouter) createdSession(w http.ResponseWriter, r *http.Request) (string, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return "", false // the local server answers 415
	}
	if r.ContentLength > rt.maxBody {
		return "", false // the local server answers 413
	}
	rc := http.NewResponseController(w)
	if rt.bodyTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(rt.bodyTimeout))
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, rt.maxBody+1))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || int64(len(body)) > rt.maxBody {
		// The local server sees the body as far as it was read, and
		// refuses it (too large, cut short or not JSON).
		return "", false
	}
	var fields map[string]json.RawMessage
	if len(bytes.TrimSpace(body)) == 0 {
		fields = map[string]json.RawMessage{}
	} else if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return "", false
	}
	var id string
	if raw, ok := fields["id"]; ok {
		if err := json.Unmarshal(raw, &id); err != nil {
			return "", false
		}
	}
	if id == "" {
		id = rt.newID()
		raw, _ := json.Marshal(id)
		fields["id"] = raw
		if body, err = json.Marshal(fields); err != nil {
			return "", false
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", fmt.Sprint(len(body)))
	}
	if memory.ValidateSession(id) != nil {
		return "", false
	}
	return id, true
}

// sessionOfPath returns the session id that u's path names: the segment
// after /v1/sessions/, unescaped, in a canonical path of the API. It
// returns false for every other path, and for an id the journal would
// refuse (the local server answers those).
func sessionOfPath(u *url.URL) (string, bool) {
	const prefix = "/v1/sessions/"
	p := u.Path
	if !strings.HasPrefix(p, prefix) || path.Clean(p) != p {
		return "", false
	}
	raw := u.EscapedPath()
	if !strings.HasPrefix(raw, prefix) {
		return "", false
	}
	seg, _, _ := strings.Cut(raw[len(prefix):], "/")
	id, err := url.PathUnescape(seg)
	if err != nil || memory.ValidateSession(id) != nil {
		return "", false
	}
	return id, true
}

// unavailable answers 503 with Retry-After and an API error body.
func unavailable(w http.ResponseWriter, code, msg string) {
	b, _ := json.Marshal(httpapi.ErrorBody{Error: &httpapi.Error{Code: code, Message: msg}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Retry-After", retryAfter)
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(append(b, '\n'))
}
