package mcp

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// LoopbackAuthorizer is the Authorizer of a program with a user at a
// terminal: it prints the authorization URL (and may open a browser), and
// receives the redirect on an HTTP listener bound to 127.0.0.1 only, at
// http://127.0.0.1:PORT/callback. The listener is open only while
// Authorize waits, and answers only the callback that carries the state of
// the request it waits for.
type LoopbackAuthorizer struct {
	// Out receives the authorization URL and the instructions. Nil means
	// io.Discard, which only suits a program that sets Open.
	Out io.Writer
	// Open, when set, is called with the authorization URL (to open a
	// browser); an error is printed and the URL stays on Out.
	Open func(url string) error
	// Listening, when set, is called once the listener takes the
	// redirect, before the URL is shown, so that nothing offers the URL
	// to a user before the browser can come back.
	Listening func()
	// Port is the listener's port. Zero picks a port that is free when
	// RedirectURL is called (authorization servers accept any port on a
	// loopback redirect URI, RFC 8252 section 7.3).
	Port int
}

var _ Authorizer = (*LoopbackAuthorizer)(nil)

// RedirectURL implements Authorizer: the callback URL on Port, or on a
// port free now.
func (a *LoopbackAuthorizer) RedirectURL(ctx context.Context, server string) (string, error) {
	port := a.Port
	if port == 0 {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("oauth redirect listener on 127.0.0.1: %w", err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
	}
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + "/callback", nil
}

// Authorize implements Authorizer: it prints req.URL and waits for the
// browser to come back to the callback with the request's state.
func (a *LoopbackAuthorizer) Authorize(ctx context.Context, req AuthorizationRequest) (AuthorizationResult, error) {
	au, err := url.Parse(req.URL)
	if err != nil {
		return AuthorizationResult{}, fmt.Errorf("authorization URL: %w", err)
	}
	state := au.Query().Get("state")
	ru, err := url.Parse(req.RedirectURL)
	if err != nil || ru.Hostname() != "127.0.0.1" {
		return AuthorizationResult{}, fmt.Errorf("redirect URL %q: not a loopback URL of this authorizer", req.RedirectURL)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", ru.Host)
	if err != nil {
		return AuthorizationResult{}, fmt.Errorf("oauth redirect listener on %s (set another port with --redirect-port): %w", ru.Host, err)
	}
	defer ln.Close()

	results := make(chan AuthorizationResult, 1)
	failures := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		res, err := callbackResult(r.URL.Query(), state)
		switch {
		case errors.Is(err, errForeignCallback):
			http.Error(w, "this is not the authorization agcore is waiting for", http.StatusBadRequest)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
			select {
			case failures <- err:
			default:
			}
			return
		}
		fmt.Fprintf(w, "<!doctype html><p>agcore is authorized for MCP server %s. You can close this tab.</p>\n", html.EscapeString(req.Server))
		select {
		case results <- res:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if a.Listening != nil {
		a.Listening()
	}
	out := a.Out
	if out == nil {
		out = io.Discard
	}
	fmt.Fprintf(out, "MCP server %s needs authorization. Open this URL in a browser:\n\n  %s\n\nWaiting for the browser to come back to %s ...\n", req.Server, req.URL, req.RedirectURL)
	if a.Open != nil {
		if err := a.Open(req.URL); err != nil {
			fmt.Fprintf(out, "(could not open a browser: %v)\n", err)
		}
	}

	select {
	case res := <-results:
		fmt.Fprintf(out, "Authorized.\n")
		return res, nil
	case err := <-failures:
		return AuthorizationResult{}, err
	case <-ctx.Done():
		return AuthorizationResult{}, fmt.Errorf("waiting for the authorization redirect: %w", ctx.Err())
	}
}

// errForeignCallback marks a callback that does not carry the state of
// the authorization waited for.
var errForeignCallback = errors.New("not the authorization waited for")

// callbackResult reads the query of a redirect to the callback of the
// authorization whose state is state: errForeignCallback when it is not
// that one (another state, or none), the authorization server's refusal
// when it refused, else the code.
func callbackResult(q url.Values, state string) (AuthorizationResult, error) {
	if state == "" || q.Get("state") != state {
		return AuthorizationResult{}, errForeignCallback
	}
	if e := q.Get("error"); e != "" {
		msg := e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		return AuthorizationResult{}, fmt.Errorf("the authorization server refused: %s", msg)
	}
	if q.Get("code") == "" {
		return AuthorizationResult{}, errors.New("the redirect carries no authorization code")
	}
	return AuthorizationResult{Code: q.Get("code"), State: state, Iss: q.Get("iss")}, nil
}
