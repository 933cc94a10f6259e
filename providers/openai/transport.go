package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	oai "github.com/sashabaranov/go-openai"
)

// exchange records the HTTP response of one call: its status and headers
// (for Retry-After) classify a failure, and a stream's body is decoded by
// this package.
type exchange struct {
	resp *http.Response
}

// maxErrorBody caps how much of an error response is read.
const maxErrorBody = 1 << 20

// post sends the request body b to the chat completions endpoint, with the
// headers go-openai sends for a call of that kind, and records the response
// into x. A response with a failure status (below 200 or from 400, as
// go-openai counts them) is read, closed and returned as the error
// go-openai returns for it: an *oai.APIError when the body is an OpenAI
// error object, an *oai.RequestError otherwise. post takes b over and
// releases it.
func (a *api) post(ctx context.Context, b *requestBody, stream bool, x *exchange) (*http.Response, error) {
	// The request reads a copy of the body from a bytes.Reader, which
	// net/http knows to be in memory: it then writes the headers and the
	// body together, where for any other reader it flushes the headers
	// first (two writes, and two wake-ups of the server, per request). The
	// encoding buffer goes back to the pool at once.
	body := bytes.Clone(b.buf)
	b.release()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.chatURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}

	// One backing array for the header values; each value has a capacity
	// of one, so that a transport appending to one does not touch another.
	vals := make([]string, 0, 6)
	set := func(key, v string) {
		vals = append(vals, v)
		req.Header[key] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	set("Content-Type", "application/json")
	if stream {
		set("Accept", "text/event-stream")
		set("Cache-Control", "no-cache")
		set("Connection", "keep-alive")
	} else {
		set("Accept", "application/json")
	}
	if a.authorization != "" {
		set("Authorization", a.authorization)
	}
	if a.organization != "" {
		set("Openai-Organization", a.organization)
	}

	resp, err := a.http.Do(req)
	if err != nil {
		return nil, err
	}
	x.resp = resp
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusBadRequest {
		defer resp.Body.Close()
		return nil, errorResponse(resp)
	}
	return resp, nil
}

// errorResponse decodes the body of a failure status as go-openai does.
func errorResponse(resp *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return fmt.Errorf("error, reading response body: %w", err)
	}
	var errRes oai.ErrorResponse
	err = json.Unmarshal(body, &errRes)
	if err != nil || errRes.Error == nil {
		reqErr := &oai.RequestError{
			HTTPStatus:     resp.Status,
			HTTPStatusCode: resp.StatusCode,
			Err:            err,
			Body:           body,
		}
		if errRes.Error != nil {
			reqErr.Err = errRes.Error
		}
		return reqErr
	}
	errRes.Error.HTTPStatus = resp.Status
	errRes.Error.HTTPStatusCode = resp.StatusCode
	return errRes.Error
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
