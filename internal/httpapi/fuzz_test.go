package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/providers/scripted"
)

// FuzzHTTPAPI sends arbitrary methods, paths, bodies and headers to the
// handler: it must never panic, and must answer 2xx or 4xx, every 4xx with
// a JSON error body.
func FuzzHTTPAPI(f *testing.F) {
	f.Add(uint8(1), "/v1/sessions/s1/turns", []byte(`{"input":"hi"}`), "")
	f.Add(uint8(1), "/v1/sessions/s1/turns?stream=true", []byte(`{"input":"hi","turn_id":"t"}`), "text/event-stream")
	f.Add(uint8(1), "/v1/sessions", []byte(`{"id":"x","agent":""}`), "")
	f.Add(uint8(0), "/v1/sessions/s1/history", []byte(nil), "")
	f.Add(uint8(2), "/v1/sessions/s1", []byte(nil), "")
	f.Add(uint8(1), "/v1/sessions/s1/approvals/c1", []byte(`{"allow":false}`), "")
	f.Add(uint8(3), "/metrics", []byte(`{`), "")
	f.Add(uint8(1), "/v1/sessions/%2F/cancel", []byte(`{"input":null}`), "application/json")

	script := scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}}}}
	e := newEnv(f, envOptions{script: script,
		config: func(c *httpapi.Config) { c.AllowedHosts = []string{"agcore.test"} }})
	e.createSession("s1")
	f.Fuzz(func(t *testing.T, method uint8, path string, body []byte, accept string) {
		methods := []string{"GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"}
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		u, err := url.ParseRequestURI(path)
		if err != nil {
			t.Skip()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, methods[int(method)%len(methods)], "http://agcore.test/", bytes.NewReader(body))
		req.URL, req.RequestURI = u, u.RequestURI()
		req.Header.Set("Accept", accept)
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(&stopOnFlush{rec, cancel}, req)
		code := rec.Code
		if code < 200 || code >= 500 || code >= 300 && code < 400 {
			t.Fatalf("%s %s: status %d: %s", req.Method, path, code, rec.Body.Bytes())
		}
		if code >= 400 && req.Method != "HEAD" {
			errorBody(t, rec.Body.Bytes())
		}
		if code == http.StatusMethodNotAllowed && rec.Header().Get("Allow") == "" {
			t.Fatal("405 without Allow")
		}
	})
}

// stopOnFlush ends the request at its first flush: a stream has started,
// and following it is not the point of the fuzz target.
type stopOnFlush struct {
	*httptest.ResponseRecorder
	stop context.CancelFunc
}

func (w *stopOnFlush) Flush() {
	w.ResponseRecorder.Flush()
	w.stop()
}
