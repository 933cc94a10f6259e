package openai

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// exchange records the HTTP response of one call, which go-openai does not
// expose on its errors: the status, the headers (for Retry-After) and, for a
// stream, the body this package decodes itself.
type exchange struct {
	resp *http.Response
	// stream says the call opens a stream: the doer takes a successful
	// response's body for this package and tells go-openai errBodyTaken,
	// so that go-openai does not wrap the body in a reader of its own (4
	// KiB per call) that this package would never read.
	stream bool
}

// errBodyTaken is what go-openai is told when the doer took the body of a
// stream that opened (see exchange). It never leaves this package.
var errBodyTaken = errors.New("openai: the stream's body is read by this package")

type exchangeKey struct{}

// withExchange returns a context under which the doer records the response
// of the request made with it into x.
func withExchange(ctx context.Context, x *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, x)
}

// doer is the go-openai HTTPDoer. It sends requests with an *http.Client
// and records each response into the exchange found in the request's
// context. One exchange serves one call, made on one goroutine, so no
// locking is needed.
type doer struct {
	client *http.Client
}

// Do implements openai.HTTPDoer.
func (d doer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.client.Do(req)
	if x, ok := req.Context().Value(exchangeKey{}).(*exchange); ok && resp != nil {
		x.resp = resp
		// go-openai takes 200-399 for success (isFailureStatusCode).
		if x.stream && err == nil && resp.StatusCode >= 200 && resp.StatusCode < 400 {
			return nil, errBodyTaken
		}
	}
	return resp, err
}

// newHTTPClient returns the client used when Options.HTTPClient is nil: no
// overall timeout (Options.Timeout bounds calls through their contexts),
// connections (name resolution included) bounded by dial, which is
// negative for no bound, and a connection pool sized for many concurrent
// sessions.
func newHTTPClient(dial time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: max(dial, 0), KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	t.IdleConnTimeout = 90 * time.Second
	return &http.Client{Transport: t}
}
