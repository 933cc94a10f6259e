package mcp

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// stderrTail is how much of a stdio server's stderr is kept for error
// messages.
const stderrTail = 4 << 10

// attempt is one connection attempt's transport and what it knows of the
// process it started, if any.
type attempt struct {
	transport sdk.Transport
	// exact is true when the transport marks the server's requests with
	// the tool call they belong to (attributeTransport).
	exact  bool
	cmd    *exec.Cmd   // nil unless stdio
	stderr *tailWriter // nil unless stdio
}

// pid returns the started process's id, or 0.
func (a *attempt) pid() int {
	if a.cmd == nil || a.cmd.Process == nil {
		return 0
	}
	return a.cmd.Process.Pid
}

// newAttempt builds the transport of one connection attempt.
func newAttempt(ctx context.Context, cfg ServerConfig, log zerolog.Logger) (*attempt, error) {
	switch {
	case cfg.Transport != nil:
		t, err := cfg.Transport(ctx)
		if err != nil {
			return nil, err
		}
		return &attempt{transport: t}, nil
	case cfg.URL != "":
		t, err := httpTransport(cfg, log)
		if err != nil {
			return nil, err
		}
		return &attempt{transport: t, exact: true}, nil
	}
	// The command outlives ctx (which only bounds the start): the process
	// is stopped by closing the session.
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Dir
	if len(cfg.Env) > 0 {
		cmd.Env = append(os.Environ(), cfg.Env...)
	}
	// stderr is always drained, so a chatty server cannot block on a full
	// pipe; its tail explains a server that dies.
	tail := &tailWriter{max: stderrTail, log: log}
	cmd.Stderr = tail
	// A grandchild holding stderr open must not keep Wait from returning.
	cmd.WaitDelay = 2 * time.Second
	return &attempt{
		transport: &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second},
		cmd:       cmd,
		stderr:    tail,
	}, nil
}

// httpTransport is a Streamable HTTP transport that adds the configured
// headers and bearer token to every request, and runs the authorization
// flow when cfg.OAuth is set.
func httpTransport(cfg ServerConfig, log zerolog.Logger) (sdk.Transport, error) {
	headers := http.Header{}
	for k, v := range cfg.Headers {
		headers.Set(k, v)
	}
	if cfg.BearerToken != "" {
		headers.Set("Authorization", "Bearer "+cfg.BearerToken)
	}
	client := &http.Client{Transport: &attributeTransport{base: &headerTransport{base: http.DefaultTransport, headers: headers}}}
	t := &sdk.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: client}
	switch {
	case cfg.OAuth == nil:
	case cfg.OAuth.Grant == GrantClientCredentials:
		h, err := newClientCredentials(cfg)
		if err != nil {
			return nil, err
		}
		t.OAuthHandler = h
	default:
		h, err := newOAuthHandler(cfg, log)
		if err != nil {
			return nil, err
		}
		t.OAuthHandler = h
	}
	return t, nil
}

// headerTransport sets fixed headers on each request (on a clone: a
// RoundTripper must not modify its request).
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// tailWriter keeps the last max bytes written and logs each complete line
// at debug level.
type tailWriter struct {
	max int
	log zerolog.Logger

	mu   sync.Mutex
	buf  []byte
	line []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		w.log.Debug().Str("stderr", string(w.line[:i])).Msg("mcp server stderr")
		w.line = w.line[i+1:]
	}
	if len(w.line) > w.max {
		w.line = w.line[len(w.line)-w.max:]
	}
	return len(p), nil
}

// String returns the kept tail, trimmed.
func (w *tailWriter) String() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(string(w.buf))
}
