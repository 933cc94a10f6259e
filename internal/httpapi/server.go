package httpapi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"iter"
	"log"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/net/netutil"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/schedule"
	"github.com/agcore/agcore/toolsys"
)

// Defaults of Config.
const (
	// DefaultMaxBodyBytes is the largest request body when
	// Config.MaxBodyBytes is zero.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultHeartbeat is the interval of SSE heartbeat comments when
	// Config.Heartbeat is zero.
	DefaultHeartbeat = 15 * time.Second
	// DefaultStreamWriteTimeout bounds one SSE write when
	// Config.StreamWriteTimeout is zero.
	DefaultStreamWriteTimeout = 30 * time.Second
	// DefaultShutdownGrace bounds the cancellation of turns and the
	// runtime's shutdown once Shutdown's context has ended, when
	// Config.ShutdownGrace is zero.
	DefaultShutdownGrace = 10 * time.Second
	// DefaultReadHeaderTimeout bounds the reading of request headers when
	// Config.ReadHeaderTimeout is zero.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds the reading of a request body when
	// Config.BodyTimeout is zero.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection waits for its
	// next request when Config.IdleTimeout is zero.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxConnections caps the open connections when
	// Config.MaxConnections is zero.
	DefaultMaxConnections = 512
)

// ErrServerClosed is returned by Serve after Shutdown, and by a second
// Shutdown.
var ErrServerClosed = errors.New("httpapi: server closed")

// Journal is what the server reads of the runtime's session journal;
// memory.Journal implements it. It must be the journal the runtime writes.
// The server never writes to it: sessions are deleted through
// actors.Runtime.Delete.
type Journal interface {
	// Tail returns the seq of the session's last entry, 0 when it has none.
	Tail(ctx context.Context, session string) (uint64, error)
	// Load folds the session's journal; memory.ErrNotFound when it has none.
	Load(ctx context.Context, session string) (*memory.State, error)
	// Sessions yields the ids of the sessions that have a journal.
	Sessions(ctx context.Context) iter.Seq2[string, error]
}

// ToolStats reports per-tool statistics; *toolsys.Registry implements it.
type ToolStats interface {
	AllStats() map[string]toolsys.Stats
}

// Config configures a Server. Runtime is required; every other field has a
// documented default.
//
// Tool calls wait for approval through the runtime: set
// actors.Config.Approver (actors.ManualApprover when only the API answers)
// and the API lists the runtime's pending approvals, streams its
// approval_pending events and answers with actors.Runtime.Approve.
type Config struct {
	// Runtime runs the sessions. The Server owns it from New on: Shutdown
	// shuts it down.
	Runtime *actors.Runtime
	// Journal is read for history and listing. Nil means the runtime's
	// (actors.Runtime.Journal).
	Journal Journal
	// Tools reports the tool statistics the console shows. Nil means none.
	Tools ToolStats
	// Metrics counts HTTP requests. Nil means fresh Metrics.
	Metrics *Metrics
	// Schedules are the schedules the API lists and changes (the runtime
	// fires them when they are its Config.Schedules). Nil means none: the
	// /v1/schedules routes answer 404.
	Schedules *schedule.Store
	// Console serves the web console at / (its assets under /console/):
	// the pages are public, and the API calls they make need Token. False
	// (the default) serves the API alone.
	Console bool
	// MetricsReader is read at each scrape of /metrics for the runtime's
	// series (turns, tokens, cost, model and tool calls, active sessions,
	// restarts): give the runtime a MeterProvider with this reader among
	// its readers (actors.Config.MeterProvider), so that /metrics and an
	// OTLP exporter show one source. Nil means /metrics holds the HTTP
	// series only. *sdkmetric.ManualReader implements it.
	MetricsReader MetricsReader
	// Agents names the agent profiles a session may be created with, so
	// that an unknown agent is refused before the session exists. Empty
	// means the runtime's profiles (actors.Runtime.Agents).
	Agents []string
	// MCPAuthorizations lists the MCP servers waiting for a user to
	// authorize agcore (GET /v1/mcp/authorizations and the console's
	// banner). Nil means none is ever listed.
	MCPAuthorizations AuthorizationLister

	// Token, when not empty, is the bearer token every request except
	// /healthz and /readyz must carry (Authorization: Bearer <token>).
	Token string
	// MaxBodyBytes bounds request bodies; a larger one gets 413. Zero
	// means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Heartbeat is the interval of the comment lines that keep an idle SSE
	// stream open through proxies. Zero means DefaultHeartbeat; negative
	// means none.
	Heartbeat time.Duration
	// StreamWriteTimeout bounds each write to an SSE client; a client that
	// does not read for that long is disconnected. Zero means
	// DefaultStreamWriteTimeout; negative means no bound.
	StreamWriteTimeout time.Duration
	// ShutdownGrace bounds, once Shutdown's context has ended, the wait
	// for cancelled turns to end, for handlers to finish writing their
	// streams, and for the runtime to stop. Zero means DefaultShutdownGrace.
	ShutdownGrace time.Duration

	// CORSOrigins are the web origins ("https://console.example.com")
	// whose pages may use the API across origins; they are granted CORS
	// access (their own origin, never a wildcard, never cookies). Empty
	// means none: a request from any page but the server's own origin is
	// refused with 403, whatever its method. See ParseOrigin for the form.
	CORSOrigins []string
	// AllowedHosts are names the Host header may carry besides the
	// address a client connected to (and, on a loopback connection,
	// "localhost" and loopback addresses on that port): "name" on any
	// port, or "name:port". Set it to the names a server is reached by
	// through DNS or a reverse proxy. Empty means none: any other Host is
	// refused with 421, which defeats DNS rebinding. See ParseAllowedHost.
	AllowedHosts []string

	// BodyTimeout bounds the reading of a request's body, from the start
	// of the request; a body that takes longer is refused with 408 and its
	// connection closed. It is a read deadline on the connection, set by
	// ServeHTTP (also under another http.Server) and lifted once the body
	// is read: it never bounds the response, and SSE streams last as long
	// as their turn or their client. Zero means DefaultBodyTimeout;
	// negative is an error.
	BodyTimeout time.Duration

	// The following bound the connections of Serve; a negative value is an
	// error. An http.Server that serves the Server as a Handler sets its
	// own.

	// ReadHeaderTimeout bounds the reading of a request's headers. Zero
	// means DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its
	// next request. Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxConnections caps the connections open at once (each SSE stream
	// holds one); more wait to be accepted. Zero means
	// DefaultMaxConnections.
	MaxConnections int

	// Logger receives a debug line per request and the errors of the
	// server. The zero Logger discards them.
	Logger zerolog.Logger
	// Redactor masks credentials in every response body: error bodies with
	// redact.Redactor.JSON, everything else (sessions, history, event
	// streams) with its Content mode. Nil means the Runtime's.
	Redactor *redact.Redactor
}

// Server is the HTTP API of a runtime: sessions, turns streamed as
// Server-Sent Events, cancellation, approvals, history, usage, health and
// Prometheus metrics. It is an http.Handler, and can also serve a listener
// itself (Serve) so that Shutdown stops accepting connections. It is safe
// for concurrent use.
type Server struct {
	cfg      Config
	rt       *actors.Runtime
	journal  Journal
	metrics  *Metrics
	log      zerolog.Logger
	tokenSum [sha256.Size]byte
	mux      *http.ServeMux
	origins  originPolicy
	hosts    hostPolicy

	// public are the paths served without the token (the health probes).
	public map[string]bool
	// openAPI builds the OpenAPI document once.
	openAPI func() ([]byte, error)

	// sessMu orders session creation and deletion (writers) against the
	// requests that activate an existing session (readers).
	sessMu sync.RWMutex

	mu       sync.Mutex
	closing  bool
	closed   chan struct{} // closed when Shutdown starts
	httpSrv  *http.Server
	turns    sync.WaitGroup // turn requests in flight
	running  map[string]int // turn requests in flight by session
	streams  atomic.Int64
	inFlight atomic.Int64
}

// New returns a Server for cfg. It fails, with an error matching
// ErrInvalidConfig that names the field, when Runtime is missing, a timeout
// or MaxConnections is negative, or an entry of CORSOrigins or AllowedHosts
// is not valid.
func New(cfg Config) (*Server, error) {
	if cfg.Runtime == nil {
		return nil, fmt.Errorf("%w: Config.Runtime is required", ErrInvalidConfig)
	}
	for name, d := range map[string]time.Duration{"ReadHeaderTimeout": cfg.ReadHeaderTimeout,
		"BodyTimeout": cfg.BodyTimeout, "IdleTimeout": cfg.IdleTimeout} {
		if d < 0 {
			return nil, fmt.Errorf("%w: Config.%s must not be negative, got %v", ErrInvalidConfig, name, d)
		}
	}
	if cfg.MaxConnections < 0 {
		return nil, fmt.Errorf("%w: Config.MaxConnections must not be negative, got %d", ErrInvalidConfig, cfg.MaxConnections)
	}
	origins, err := newOriginPolicy(cfg.CORSOrigins)
	if err != nil {
		return nil, err
	}
	hosts, err := newHostPolicy(cfg.AllowedHosts)
	if err != nil {
		return nil, err
	}
	if cfg.Redactor == nil {
		cfg.Redactor = cfg.Runtime.Redactor()
	}
	if cfg.Journal == nil {
		cfg.Journal = cfg.Runtime.Journal()
	}
	if len(cfg.Agents) == 0 {
		cfg.Agents = cfg.Runtime.Agents()
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.StreamWriteTimeout == 0 {
		cfg.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	cfg.ReadHeaderTimeout = cmp.Or(cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	cfg.BodyTimeout = cmp.Or(cfg.BodyTimeout, DefaultBodyTimeout)
	cfg.IdleTimeout = cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout)
	cfg.MaxConnections = cmp.Or(cfg.MaxConnections, DefaultMaxConnections)
	cfg.Agents = append([]string(nil), cfg.Agents...)
	cfg.CORSOrigins = append([]string(nil), cfg.CORSOrigins...)
	cfg.AllowedHosts = append([]string(nil), cfg.AllowedHosts...)
	s := &Server{
		origins: origins, hosts: hosts,
		cfg: cfg, rt: cfg.Runtime, journal: cfg.Journal, metrics: cfg.Metrics,
		log: cfg.Logger.With().Str("component", "httpapi").Logger(), closed: make(chan struct{}),
		running: make(map[string]int),
	}
	if s.metrics == nil {
		s.metrics = &Metrics{}
	}
	if cfg.Token != "" {
		s.tokenSum = sha256.Sum256([]byte(cfg.Token))
	}
	s.openAPI = sync.OnceValues(OpenAPI)
	s.routes()
	return s, nil
}

// routes registers the endpoints of routeTable, and the fallback that
// answers the requests none of them matches.
func (s *Server) routes() {
	m := http.NewServeMux()
	s.public = map[string]bool{}
	for _, rt := range routeTable() {
		m.HandleFunc(rt.pattern(), func(w http.ResponseWriter, r *http.Request) { rt.handle(s, w, r) })
		if rt.doc.public {
			s.public[rt.path] = true
		}
	}
	if s.cfg.Console {
		s.consoleRoutes(m)
	}
	m.HandleFunc("/", s.handleFallback)
	s.mux = m
}

// fallbackRoute labels the requests no endpoint matches.
const fallbackRoute = "unmatched"

// ServeHTTP implements http.Handler. It refuses, in this order, a Host
// that does not name the server (421), a request from a foreign web page
// (403; a CORS preflight is answered here), a missing or wrong token
// (401), a body that is not JSON (415), too large (413) or too slow (408);
// then it answers the request and counts it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rc := http.NewResponseController(w)
	if hasBody(r) {
		// Set first, so that it also bounds the discarding of the body of
		// a request refused before its body is read.
		_ = rc.SetReadDeadline(start.Add(s.cfg.BodyTimeout))
	}
	s.inFlight.Add(1)
	rec := &statusRecorder{ResponseWriter: w, redactor: s.cfg.Redactor}
	_, route := s.mux.Handler(r)
	if route == "/" || route == "" {
		route = fallbackRoute
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error().Interface("panic", v).Str("route", route).Msg("handler panicked")
			if !rec.wrote {
				writeError(rec, fmt.Errorf("handler panicked: %v", v))
			}
		}
		s.inFlight.Add(-1)
		took := time.Since(start)
		s.metrics.observeRequest(route, rec.code(), took)
		s.log.Debug().Str("method", r.Method).Str("path", r.URL.Path).Str("route", route).
			Int("status", rec.code()).Dur("took", took).Msg("request")
	}()

	if !s.guard(rec, r) {
		return
	}
	public := s.public[r.URL.Path]
	if !public && !s.authorized(r) {
		rec.Header().Set("WWW-Authenticate", `Bearer realm="agcore"`)
		msg := "missing bearer token: send Authorization: Bearer <token>"
		if r.Header.Get("Authorization") != "" {
			rec.Header().Set("WWW-Authenticate", `Bearer realm="agcore", error="invalid_token"`)
			msg = "invalid bearer token"
		}
		writeError(rec, apiErr(http.StatusUnauthorized, CodeUnauthorized, "%s", msg))
		return
	}
	if !public && s.isClosing() {
		rec.Header().Set("Connection", "close")
		writeError(rec, apiErr(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down"))
		return
	}
	if p := r.URL.Path; p == "" || p[0] != '/' || path.Clean(p) != p {
		// ServeMux would redirect to the clean path, with an HTML body.
		writeError(rec, apiErr(http.StatusNotFound, CodeNotFound, "no endpoint at %q: the path is not in canonical form", p))
		return
	}
	if err := checkContentType(r); err != nil {
		writeError(rec, err)
		return
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		writeError(rec, apiErr(http.StatusRequestEntityTooLarge, CodeBodyTooLarge,
			"request body is larger than %d bytes", s.cfg.MaxBodyBytes))
		return
	}
	if hasBody(r) {
		if err := s.readBody(rec, rc, r); err != nil {
			writeError(rec, err)
			return
		}
	}
	s.mux.ServeHTTP(rec, r)
}

// guard applies the host and origin policies to r and reports whether it
// may go on. Otherwise it has answered: with an error, or with the answer
// to a CORS preflight. Every response varies with the Origin header.
func (s *Server) guard(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	h.Add("Vary", "Origin")
	preflightReq := isPreflight(r)
	if preflightReq {
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !s.hosts.allows(r.Host, local, r.TLS != nil) {
		writeError(w, apiErr(http.StatusMisdirectedRequest, CodeHostNotAllowed,
			"the Host header does not name this server; add the name the server is reached by "+
				"with --allowed-host (config serve.allowed_hosts)"))
		return false
	}
	grant, err := s.origins.check(r)
	if err != nil {
		writeError(w, err)
		return false
	}
	if preflightReq {
		preflight(w, r, grant)
		return false
	}
	if grant != "" {
		h.Set("Access-Control-Allow-Origin", grant)
	}
	return true
}

// authorized reports whether r carries the configured token (or none is
// configured). The comparison takes the same time whatever the token.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) == 1
}

// handleFallback answers the requests no endpoint matches: 405 with an
// Allow header when the path exists for other methods, 404 otherwise.
func (s *Server) handleFallback(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "/" && p != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		if slices.Contains(allowed, http.MethodGet) {
			allowed = append(allowed, http.MethodHead)
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(w, apiErr(http.StatusMethodNotAllowed, CodeMethodNotAllowed,
			"method %s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allowed, " or ")))
		return
	}
	writeError(w, apiErr(http.StatusNotFound, CodeNotFound, "no endpoint at %s %s", r.Method, r.URL.Path))
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// Serve accepts connections on ln and serves the API until Shutdown, when
// it returns ErrServerClosed. Any other error stops it. It holds at most
// Config.MaxConnections connections at once, and applies
// Config.ReadHeaderTimeout and Config.IdleTimeout to them.
func (s *Server) Serve(ln net.Listener) error {
	// No ReadTimeout or WriteTimeout: they would cut SSE streams.
	// ServeHTTP bounds each body with a read deadline instead, and SSE
	// writes have their own deadlines.
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ErrorLog:          log.New(s.log.With().Str("source", "net/http").Logger(), "", 0),
	}
	ln = netutil.LimitListener(ln, s.cfg.MaxConnections)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.httpSrv = hs
	s.mu.Unlock()
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return ErrServerClosed
	}
	return err
}

// Shutdown stops the server gracefully, in this order: it stops accepting
// connections (when serving a listener) and answers new requests with 503;
// it ends every watch stream (GET .../events) with a stream_error event
// whose code is shutting_down; it waits for the turns being streamed or
// awaited to complete. If ctx ends first, it cancels those turns (their
// clients receive turn_ended with outcome cancelled) and waits up to
// Config.ShutdownGrace for them. Then it shuts the runtime down, which
// flushes the journal. It returns ctx's error when it had to cancel turns,
// and ErrServerClosed when called again.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.closing = true
	close(s.closed)
	hs := s.httpSrv
	s.mu.Unlock()

	// The HTTP server drains on a context of its own: when ctx ends, the
	// handlers still get ShutdownGrace to write the end of the streams of
	// the turns cancelled below, instead of having their connections cut.
	httpCtx, stopHTTP := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHTTP()
	httpDone := make(chan error, 1)
	if hs != nil {
		go func() { httpDone <- hs.Shutdown(httpCtx) }()
	} else {
		httpDone <- nil
	}

	turnsDone := make(chan struct{})
	go func() {
		s.turns.Wait()
		close(turnsDone)
	}()
	var result error
	select {
	case <-turnsDone:
	case <-ctx.Done():
		result = ctx.Err()
		grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownGrace)
		defer cancel()
		s.cancelRunning(grace)
		select {
		case <-turnsDone:
		case <-grace.Done():
			s.log.Warn().Msg("turns still running after cancellation; shutting the runtime down")
		}
	}

	if err := s.waitHTTP(ctx, httpDone, stopHTTP); err != nil && hs != nil {
		// The grace ended with connections still open.
		_ = hs.Close()
	}

	rctx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownGrace)
		defer cancel()
	}
	if err := s.rt.Shutdown(rctx); err != nil && !errors.Is(err, actors.ErrClosed) && result == nil {
		result = fmt.Errorf("httpapi: shutdown: %w", err)
	}
	return result
}

// waitHTTP waits for the HTTP server's graceful shutdown. Once ctx has
// ended it allows ShutdownGrace more, then stops the drain and returns its
// error.
func (s *Server) waitHTTP(ctx context.Context, httpDone <-chan error, stopHTTP context.CancelFunc) error {
	select {
	case err := <-httpDone:
		return err
	case <-ctx.Done():
	}
	grace := time.NewTimer(s.cfg.ShutdownGrace)
	defer grace.Stop()
	select {
	case err := <-httpDone:
		return err
	case <-grace.C:
		stopHTTP()
		return <-httpDone
	}
}

// cancelRunning cancels the turns of the turn requests in flight.
func (s *Server) cancelRunning(ctx context.Context) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.running))
	for id := range s.running {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		sess, err := s.rt.Open(ctx, id)
		if err == nil {
			_, err = sess.Cancel(ctx)
		}
		if err != nil {
			s.log.Warn().Err(err).Str("session", id).Msg("cancelling a turn at shutdown")
		}
	}
}

// beginTurn registers a turn request of session id; end unregisters it.
// It fails once Shutdown has started.
func (s *Server) beginTurn(id string) (end func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, apiErr(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down")
	}
	s.turns.Add(1)
	s.running[id]++
	return func() {
		s.mu.Lock()
		if s.running[id]--; s.running[id] <= 0 {
			delete(s.running, id)
		}
		s.mu.Unlock()
		s.turns.Done()
	}, nil
}

// statusRecorder remembers the status written through it.
type statusRecorder struct {
	http.ResponseWriter
	status   int
	wrote    bool
	redactor *redact.Redactor // masks each write of the body
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write masks b (an error body as JSON, any other body, event streams
// included, as model content) and writes it in one call; it reports len(b).
func (r *statusRecorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.status, r.wrote = http.StatusOK, true
	}
	out := b
	if r.status >= http.StatusBadRequest {
		out = r.redactor.JSON(b)
	} else {
		out = r.redactor.ContentJSON(b)
	}
	if _, err := r.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController reach the connection (flushes and
// write deadlines of SSE streams).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) code() int {
	if !r.wrote {
		return http.StatusOK
	}
	return r.status
}
