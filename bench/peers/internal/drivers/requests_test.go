package drivers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/agcore/agcore/bench/peers/internal/drivers/agcoreruntime"
	"github.com/agcore/agcore/bench/peers/internal/drivers/bare"
	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
)

// recorder is a proxy on 127.0.0.1 in front of the mock that keeps the body
// of every request it forwards.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func startRecorder(t *testing.T, mockURL string) (*recorder, string) {
	t.Helper()
	target, err := url.Parse(mockURL)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	// httptest listens on 127.0.0.1.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL + target.Path
}

// take returns the bodies recorded so far and forgets them.
func (r *recorder) take() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.bodies
	r.bodies = nil
	return b
}

// TestRuntimeRequestsNoLargerThanBare runs one turn of the streaming bare
// loop and one of the runtime (a new session, the same conversation)
// through a recording proxy, and compares their two requests: the runtime
// sends the same conversation in no more bytes, the same members but for
// stream_options (it asks for the usage of a streamed reply, which it
// accounts), and its tool schema differs only by the
// "additionalProperties":false that typed tools declare (they refuse
// unknown arguments).
func TestRuntimeRequestsNoLargerThanBare(t *testing.T) {
	rec, url := startRecorder(t, startMock(t, workload.Script()))
	bodies := make(map[string][]map[string]json.RawMessage)
	for _, p := range []harness.Peer{bare.StreamPeer, agcoreruntime.Peer} {
		d := newDriver(t, p, url, 1)
		if err := d.Turn(t.Context()); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, b := range rec.take() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("%s sent %q: %v", p.Name, b, err)
			}
			bodies[p.Name] = append(bodies[p.Name], m)
		}
	}
	want, got := bodies[bare.StreamPeer.Name], bodies[agcoreruntime.Peer.Name]
	if len(want) != 2 || len(got) != 2 {
		t.Fatalf("requests per turn: bare %d, runtime %d; want two each", len(want), len(got))
	}
	const strict = `"additionalProperties":false,`
	for i := range want {
		if g, w := len(got[i]["messages"]), len(want[i]["messages"]); g > w {
			t.Errorf("request %d: the runtime's messages take %d bytes, the bare loop's %d:\n%s\n%s",
				i+1, g, w, got[i]["messages"], want[i]["messages"])
		}
		for k, v := range got[i] {
			switch w, ok := want[i][k]; {
			case k == "stream_options":
			case !ok:
				t.Errorf("request %d: the runtime sends %s, which the bare loop does not", i+1, k)
			case k == "tools":
				if stripped := bytes.ReplaceAll(v, []byte(strict), nil); len(stripped) > len(w) {
					t.Errorf("request %d: the runtime's tools take %d bytes without %s, the bare loop's %d",
						i+1, len(stripped), strict, len(w))
				}
			case len(v) > len(w):
				t.Errorf("request %d: the runtime's %s is %s, the bare loop's %s", i+1, k, v, w)
			}
		}
	}
}
