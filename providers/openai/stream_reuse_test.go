package openai_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync"
	"testing"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/openai"
)

// doneSpy passes a response body through and closes seen the first time
// a read returns the stream's "data: [DONE]" line.
type doneSpy struct {
	io.ReadCloser
	once *sync.Once
	seen chan struct{}
}

func (d doneSpy) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	if bytes.Contains(p[:n], []byte("[DONE]")) {
		d.once.Do(func() { close(d.seen) })
	}
	return n, err
}

// spyTransport wraps every response body in a doneSpy.
type spyTransport struct {
	base  http.RoundTripper
	mu    sync.Mutex
	seens []chan struct{}
}

func (t *spyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	// The channel exists before the request is sent: the server's handler
	// looks it up by the request's number.
	seen := make(chan struct{})
	t.mu.Lock()
	t.seens = append(t.seens, seen)
	t.mu.Unlock()
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = doneSpy{ReadCloser: resp.Body, once: &sync.Once{}, seen: seen}
	return resp, nil
}

// seen returns the channel of the n-th request.
func (t *spyTransport) seen(n int) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seens[n]
}

// TestStream_ConnectionIsReusedAfterDone: a server that flushes
// "data: [DONE]" and only then ends its chunked body (as servers behind a
// flush-per-event writer do) must not cost a new connection per stream.
// The server ends each body only after the client has read [DONE], so the
// stream sees [DONE] before the body's end every time; the next request
// must still reuse the connection.
func TestStream_ConnectionIsReusedAfterDone(t *testing.T) {
	spy := &spyTransport{base: &http.Transport{MaxIdleConnsPerHost: 4}}
	var served int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		n := served
		served++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-spy.seen(n):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	p, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1", Model: "m", HTTPClient: &http.Client{Transport: spy}})
	if err != nil {
		t.Fatal(err)
	}
	const calls = 4
	reused := make([]bool, calls)
	for i := range calls {
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused[i] = info.Reused },
		})
		st, err := p.Stream(ctx, messages.Request{Messages: []messages.Message{messages.UserText("hi")}})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		for {
			_, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if err := st.Close(); err != nil {
			t.Fatalf("call %d: close: %v", i, err)
		}
		if got := st.Response().Message.Text(); got != "hi" {
			t.Fatalf("call %d: reply %q, want %q", i, got, "hi")
		}
	}
	for i := 1; i < calls; i++ {
		if !reused[i] {
			t.Errorf("call %d opened a new connection; want the previous stream's connection reused (reused: %v)", i, reused)
		}
	}
}

// TestStream_EndsAtDoneWhateverFollowsIt: what a server does after [DONE]
// (hold the body open, or keep sending) never keeps Recv from returning
// io.EOF with the reply; the drain that follows [DONE] is bounded.
func TestStream_EndsAtDoneWhateverFollowsIt(t *testing.T) {
	chunk := `{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`
	endless := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", chunk)
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
	for name, h := range map[string]http.HandlerFunc{
		"held open": func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", chunk)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
		"endless": endless,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			p, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1", Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			st, err := p.Stream(context.Background(), messages.Request{Messages: []messages.Message{messages.UserText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for {
				_, err := st.Recv()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("Recv: %v, want the reply and io.EOF", err)
				}
			}
			if got := st.Response().Message.Text(); got != "hi" {
				t.Fatalf("reply %q, want %q", got, "hi")
			}
		})
	}
}
