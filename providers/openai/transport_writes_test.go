package openai_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/openai"
)

// writeCounter counts the writes made on the connections it dials.
type writeCounter struct {
	mu     sync.Mutex
	writes int
}

func (w *writeCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: c, w: w}, nil
}

func (w *writeCounter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes
}

type countedConn struct {
	net.Conn
	w *writeCounter
}

func (c *countedConn) Write(p []byte) (int, error) {
	c.w.mu.Lock()
	c.w.writes++
	c.w.mu.Unlock()
	return c.Conn.Write(p)
}

// TestPost_OneWritePerRequest: a request whose headers and body fit the
// transport's write buffer goes out in one write, not its headers first
// and its body in a second write (which wakes the server twice).
func TestPost_OneWritePerRequest(t *testing.T) {
	s := newServer(t, reply{events: []string{chunk("ok", "stop"), "[DONE]"}}, reply{body: okBody("ok")})
	wc := &writeCounter{}
	hc := &http.Client{Transport: &http.Transport{DialContext: wc.dial}}
	p, _ := newProvider(t, s, func(o *openai.Options) { o.HTTPClient = hc })
	req := messages.Request{Messages: []messages.Message{messages.UserText("hello")}}

	st, err := p.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(st); err != nil {
		t.Fatal(err)
	}
	if got := wc.count(); got != 1 {
		t.Errorf("a streamed request took %d writes, want 1", got)
	}
	if _, err := p.Chat(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if got := wc.count(); got != 2 {
		t.Errorf("a streamed request and a chat request took %d writes, want 2", got)
	}
}
