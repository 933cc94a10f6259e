package httpapi_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/messages"
)

// connCounter is a listener that records how many of its connections are
// open at once, at most, and how many it accepted.
type connCounter struct {
	net.Listener
	mu                 sync.Mutex
	open, most, served int
}

func (c *connCounter) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.open++
	c.served++
	c.most = max(c.most, c.open)
	c.mu.Unlock()
	return &countedConn{Conn: conn, c: c}, nil
}

func (c *connCounter) stats() (most, served int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.most, c.served
}

type countedConn struct {
	net.Conn
	c    *connCounter
	once sync.Once
}

func (cc *countedConn) Close() error {
	cc.once.Do(func() {
		cc.c.mu.Lock()
		cc.c.open--
		cc.c.mu.Unlock()
	})
	return cc.Conn.Close()
}

// TestServe_StalledRequestsAreCut opens many connections that send a
// request and stall: half in the middle of the headers, half in the middle
// of the body. The server must close every one of them (the first without
// a response, the second with 408) while never holding more connections
// than its cap.
func TestServe_StalledRequestsAreCut(t *testing.T) {
	const conns, limit = 200, 16
	counter := &connCounter{}
	e := newEnv(t, envOptions{script: exploreScript(), serve: true,
		config: func(c *httpapi.Config) {
			c.ReadHeaderTimeout = 100 * time.Millisecond
			c.BodyTimeout = 100 * time.Millisecond
			c.MaxConnections = limit
		},
		wrap: func(ln net.Listener) net.Listener { counter.Listener = ln; return counter },
	})
	host := hostOf(e)
	stalledHeaders := "POST /v1/sessions HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: appl"
	stalledBody := "POST /v1/sessions HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" +
		"Content-Length: 64\r\n\r\n{\"id\":"

	type result struct {
		i      int
		status string // the response's status line; "" when closed without one
		err    error
	}
	results := make(chan result, conns)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			req := stalledBody
			if i%2 == 0 {
				req = stalledHeaders
			}
			c, err := net.Dial("tcp", host)
			if err != nil {
				results <- result{i: i, err: err}
				return
			}
			defer c.Close()
			// A bound for the test only: the server closes the
			// connection long before.
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			if _, err := io.WriteString(c, req); err != nil {
				results <- result{i: i, err: err}
				return
			}
			resp, err := io.ReadAll(c) // until the server closes the connection
			status, _, _ := strings.Cut(string(resp), "\r\n")
			results <- result{i: i, status: status, err: err}
		})
	}
	wg.Wait()
	close(results)
	failed := 0
	for r := range results {
		want := "HTTP/1.1 408 Request Timeout"
		if r.i%2 == 0 {
			want = ""
		}
		if r.err != nil || r.status != want {
			if failed++; failed <= 5 {
				t.Errorf("connection %d: status %q, error %v; want the server to close it with status %q", r.i, r.status, r.err, want)
			}
		}
	}
	if failed > 5 {
		t.Errorf("... and %d more connections", failed-5)
	}
	most, served := counter.stats()
	if most > limit || served != conns {
		t.Errorf("%d connections served, at most %d at once; want %d, at most %d", served, most, conns, limit)
	}
	if resp, body := e.do("GET", "/v1/sessions", ""); resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"id"`) {
		t.Errorf("after the stalled requests: %d %s", resp.StatusCode, body)
	}
}

// TestServe_StreamsOutliveReadTimeouts checks that the read timeouts never
// cut an SSE response: a turn stream (whose request had a body) and a
// watch stream stay open for many heartbeats, well past every timeout, and
// the turn stream ends with its turn.
func TestServe_StreamsOutliveReadTimeouts(t *testing.T) {
	const timeout, heartbeat = 20 * time.Millisecond, 5 * time.Millisecond
	e := newEnv(t, envOptions{script: exploreScript(), serve: true,
		config: func(c *httpapi.Config) {
			c.ReadHeaderTimeout, c.BodyTimeout, c.IdleTimeout = timeout, timeout, timeout
			c.Heartbeat = heartbeat
		},
	})
	e.createSession("s1")
	watch := e.send("GET", "/v1/sessions/s1/events", "")
	defer watch.Body.Close()
	turn := e.send("POST", "/v1/sessions/s1/turns", `{"input":"block please"}`, "Accept", "text/event-stream")
	defer turn.Body.Close()
	ts, ws := newSSEReader(turn.Body), newSSEReader(watch.Body)
	ts.until(t, "tool_started")
	<-e.block.started

	// Heartbeats come no faster than one per interval: n of them take at
	// least four times the timeouts.
	n := int(4 * timeout / heartbeat)
	ts.skipComments(t, n)
	ws.skipComments(t, n)
	close(e.block.release)
	frames := ts.rest(t)
	if ended, ok := frames[len(frames)-1].event(t).(messages.TurnEnded); !ok || ended.Outcome != messages.OutcomeCompleted {
		t.Fatalf("turn stream ended with %v", types(frames))
	}
}
