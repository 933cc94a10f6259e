package httpapi_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/messages"
)

const (
	// foreignOrigin is a page on another site, which must never drive the
	// API.
	foreignOrigin = "http://evil.example"
	// consoleOrigin is the origin the tests allow cross-origin requests
	// from.
	consoleOrigin = "https://console.example.com"
)

// hostOf returns the host:port of an env's URL.
func hostOf(e *env) string { return strings.TrimPrefix(e.url, "http://") }

// refused checks that a response is an API error with status and code that
// sends no CORS grant and does not repeat what the attacker sent.
func refused(t *testing.T, resp *http.Response, body []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	got := errorBody(t, body)
	if got.Code != code {
		t.Errorf("error code %q, want %q: %s", got.Code, code, body)
	}
	if acao := resp.Header.Get("Access-Control-Allow-Origin"); acao != "" {
		t.Errorf("refusal grants Access-Control-Allow-Origin %q", acao)
	}
	for _, echo := range []string{"evil", "text/plain", "<script>"} {
		if strings.Contains(got.Message, echo) {
			t.Errorf("error message echoes the request's %q: %s", echo, got.Message)
		}
	}
}

// TestCSRF_BrowserRequests sends, for each state-changing endpoint, the
// requests a foreign web page can make a browser send without a CORS
// preflight (and a DNS-rebinding page's), and checks each is refused and
// changes nothing; then the same requests with the right headers succeed.
func TestCSRF_BrowserRequests(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript(), serve: true,
		config: func(c *httpapi.Config) { c.CORSOrigins = []string{consoleOrigin} }})
	host := hostOf(e)
	e.createSession("s1")
	e.createSession("s2")

	// A turn of s1 waits for approval to write NOTES.md.
	stream := e.send("POST", "/v1/sessions/s1/turns", `{"input":"write a note"}`, "Accept", "text/event-stream")
	defer stream.Body.Close()
	sse := newSSEReader(stream.Body)
	frames := sse.until(t, "approval_pending")
	call := frames[len(frames)-1].event(t).(messages.ApprovalPending).CallID
	notes := filepath.Join(e.workspace, "NOTES.md")

	actions := []struct {
		name, path, body string
		// unchanged checks that a refused request had no effect.
		unchanged func(t *testing.T)
	}{
		{"create session", "/v1/sessions", `{"id":"evil"}`, func(t *testing.T) {
			if resp, body := e.do("GET", "/v1/sessions/evil", ""); resp.StatusCode != http.StatusNotFound {
				t.Errorf("the session was created: %d %s", resp.StatusCode, body)
			}
		}},
		{"start turn", "/v1/sessions/s2/turns", `{"input":"hello"}`, func(t *testing.T) {
			_, body := e.do("GET", "/v1/sessions/s2", "")
			if st := decode[httpapi.SessionStatus](t, body); st.Status != "idle" || st.Turn != 0 || st.Messages != 0 || st.Queued != 0 {
				t.Errorf("a turn was started: %s", body)
			}
		}},
		{"approve", "/v1/sessions/s1/approvals/" + call, `{"allow":true}`, func(t *testing.T) {
			_, body := e.do("GET", "/v1/sessions/s1/approvals", "")
			if list := decode[httpapi.ApprovalList](t, body); len(list.Approvals) != 1 || list.Approvals[0].CallID != call {
				t.Errorf("the approval was answered: %s", body)
			}
			if _, err := os.Stat(notes); err == nil {
				t.Error("NOTES.md was written")
			}
		}},
	}
	attacks := []struct {
		name   string
		header []string
		status int
		code   string
	}{
		{"blob body from a foreign page", []string{"Content-Type", "", "Origin", foreignOrigin, "Sec-Fetch-Site", "cross-site"},
			http.StatusForbidden, httpapi.CodeOriginNotAllowed},
		{"no Content-Type with a foreign Origin", []string{"Content-Type", "", "Origin", foreignOrigin},
			http.StatusForbidden, httpapi.CodeOriginNotAllowed},
		{"text/plain from a foreign page", []string{"Content-Type", "text/plain;charset=UTF-8", "Origin", foreignOrigin, "Sec-Fetch-Site", "cross-site"},
			http.StatusForbidden, httpapi.CodeOriginNotAllowed},
		{"JSON with a foreign Origin", []string{"Origin", foreignOrigin},
			http.StatusForbidden, httpapi.CodeOriginNotAllowed},
		{"cross-site fetch without Origin", []string{"Sec-Fetch-Site", "cross-site"},
			http.StatusForbidden, httpapi.CodeOriginNotAllowed},
		{"same-site page on another port", []string{"Origin", "http://127.0.0.1:1", "Sec-Fetch-Site", "same-site"},
			http.StatusForbidden, httpapi.CodeOriginNotAllowed},
		{"opaque origin (sandboxed frame, file://)", []string{"Origin", "null"},
			http.StatusForbidden, httpapi.CodeOriginNotAllowed},
		{"allowed origin over the wrong scheme", []string{"Origin", "http://console.example.com"},
			http.StatusForbidden, httpapi.CodeOriginNotAllowed},
		{"text/plain body", []string{"Content-Type", "text/plain"},
			http.StatusUnsupportedMediaType, httpapi.CodeUnsupportedMedia},
		{"no Content-Type", []string{"Content-Type", ""},
			http.StatusUnsupportedMediaType, httpapi.CodeUnsupportedMedia},
		{"form body", []string{"Content-Type", "application/x-www-form-urlencoded"},
			http.StatusUnsupportedMediaType, httpapi.CodeUnsupportedMedia},
		{"DNS rebinding", []string{"Host", "evil.example:" + port(host), "Origin", "http://evil.example:" + port(host), "Sec-Fetch-Site", "same-origin"},
			http.StatusMisdirectedRequest, httpapi.CodeHostNotAllowed},
		{"DNS rebinding without Origin", []string{"Host", "evil.example:" + port(host)},
			http.StatusMisdirectedRequest, httpapi.CodeHostNotAllowed},
	}
	for _, a := range actions {
		for _, at := range attacks {
			t.Run(a.name+"/"+at.name, func(t *testing.T) {
				resp, body := e.do("POST", a.path, a.body, at.header...)
				refused(t, resp, body, at.status, at.code)
				a.unchanged(t)
			})
		}
	}

	allowed := []struct {
		name   string
		header []string
		acao   string
	}{
		{"no Origin (curl)", nil, ""},
		{"same origin", []string{"Origin", "http://" + host, "Sec-Fetch-Site", "same-origin"}, ""},
		{"same origin named localhost", []string{"Host", "localhost:" + port(host), "Origin", "http://localhost:" + port(host), "Sec-Fetch-Site", "same-origin"}, ""},
		{"allowed origin", []string{"Origin", consoleOrigin, "Sec-Fetch-Site", "cross-site"}, consoleOrigin},
	}
	for i, ok := range allowed {
		t.Run("create session/"+ok.name, func(t *testing.T) {
			id := "ok" + string(rune('a'+i))
			resp, body := e.do("POST", "/v1/sessions", `{"id":"`+id+`"}`, ok.header...)
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != ok.acao {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, ok.acao)
			}
			if !slices.Contains(resp.Header.Values("Vary"), "Origin") {
				t.Errorf("Vary %q lacks Origin", resp.Header.Values("Vary"))
			}
		})
	}
	t.Run("start turn/allowed origin", func(t *testing.T) {
		resp, body := e.do("POST", "/v1/sessions/s2/turns", `{"input":"hello"}`, "Origin", consoleOrigin, "Sec-Fetch-Site", "cross-site")
		if res := decode[struct{ Outcome string }](t, body); resp.StatusCode != http.StatusOK || res.Outcome != "completed" {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	})
	t.Run("approve/same origin", func(t *testing.T) {
		resp, body := e.do("POST", "/v1/sessions/s1/approvals/"+call, `{"allow":true}`, "Origin", "http://"+host, "Sec-Fetch-Site", "same-origin")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		rest := sse.rest(t)
		if ended := rest[len(rest)-1].event(t).(messages.TurnEnded); ended.Outcome != messages.OutcomeCompleted {
			t.Fatalf("turn_ended = %+v", ended)
		}
		if _, err := os.Stat(notes); err != nil {
			t.Errorf("NOTES.md after approval: %v", err)
		}
	})
}

// port returns the port of host:port.
func port(hostport string) string {
	return hostport[strings.LastIndexByte(hostport, ':')+1:]
}

// TestHostHeader checks the names a request may address the server by:
// its listen address and loopback names for a loopback listener, and the
// configured names; any other Host is refused with 421 before anything
// else is looked at, so that a DNS-rebinding page cannot reach the API.
func TestHostHeader(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript(), serve: true, token: "tok",
		config: func(c *httpapi.Config) { c.AllowedHosts = []string{"agents.internal", "API.example.com:8443"} }})
	p := port(hostOf(e))
	tests := []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:" + p, true},
		{"localhost:" + p, true},
		{"LOCALHOST:" + p, true},
		{"[::1]:" + p, true},
		{"127.0.0.2:" + p, true}, // any loopback address literal
		{"agents.internal", true},
		{"agents.internal:" + p, true},
		{"agents.internal:9", true},
		{"api.example.com:8443", true},
		{"api.example.com", false},
		{"api.example.com:" + p, false},
		{"localhost", false}, // port 80 is not the listener's
		{"localhost:1", false},
		{"127.0.0.1:1", false},
		{"evil.example:" + p, false},
		{"localhost.evil.example:" + p, false},
		{"agents.internal.evil.example", false},
		{"10.1.2.3:" + p, false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			for _, path := range []string{"/v1/sessions", "/healthz"} {
				resp, body := e.do("GET", path, "", "Host", tt.host)
				if !tt.ok {
					refused(t, resp, body, http.StatusMisdirectedRequest, httpapi.CodeHostNotAllowed)
					if msg := errorBody(t, body).Message; !strings.Contains(msg, "--allowed-host") {
						t.Errorf("message %q does not say how to allow a name", msg)
					}
					continue
				}
				if resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s: status %d: %s", path, resp.StatusCode, body)
				}
			}
		})
	}
}

// TestCORS_Preflight checks the answers to CORS preflight requests: an
// allowed origin is granted exactly its origin, the methods and the
// headers of the API, without a token and never with a wildcard; any other
// origin, method or header is refused.
func TestCORS_Preflight(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript(), serve: true, token: "tok",
		config: func(c *httpapi.Config) { c.CORSOrigins = []string{consoleOrigin} }})
	e.createSession("s1")
	tests := []struct {
		name    string
		path    string
		origin  string
		method  string
		headers string
		ok      bool
	}{
		{"create session", "/v1/sessions", consoleOrigin, "POST", "authorization,content-type", true},
		{"turn", "/v1/sessions/s1/turns", consoleOrigin, "POST", "Authorization, Content-Type", true},
		{"event stream", "/v1/sessions/s1/events", consoleOrigin, "GET", "authorization,last-event-id", true},
		{"delete", "/v1/sessions/s1", consoleOrigin, "DELETE", "authorization", true},
		{"no headers", "/v1/sessions", consoleOrigin, "GET", "", true},
		{"foreign origin", "/v1/sessions", foreignOrigin, "POST", "content-type", false},
		{"origin with a path", "/v1/sessions", consoleOrigin + "/app", "POST", "content-type", false},
		{"method not served", "/v1/sessions", consoleOrigin, "PUT", "content-type", false},
		{"header not allowed", "/v1/sessions", consoleOrigin, "POST", "content-type,x-evil", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := []string{"Authorization", "", "Origin", tt.origin, "Sec-Fetch-Site", "cross-site",
				"Access-Control-Request-Method", tt.method}
			if tt.headers != "" {
				h = append(h, "Access-Control-Request-Headers", tt.headers)
			}
			resp, body := e.do("OPTIONS", tt.path, "", h...)
			for name, values := range resp.Header {
				for _, v := range values {
					if strings.HasPrefix(name, "Access-Control-") && strings.Contains(v, "*") {
						t.Errorf("%s: %q is a wildcard", name, v)
					}
				}
			}
			if resp.Header.Get("Access-Control-Allow-Credentials") != "" {
				t.Error("Access-Control-Allow-Credentials is sent: the API takes a bearer token, never cookies")
			}
			if !tt.ok {
				refused(t, resp, body, http.StatusForbidden, httpapi.CodeOriginNotAllowed)
				return
			}
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != consoleOrigin {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			methods := resp.Header.Get("Access-Control-Allow-Methods")
			for _, m := range []string{"GET", "POST", "DELETE"} {
				if !strings.Contains(methods, m) {
					t.Errorf("Access-Control-Allow-Methods %q lacks %s", methods, m)
				}
			}
			headers := resp.Header.Get("Access-Control-Allow-Headers")
			for _, h := range []string{"Authorization", "Content-Type", "Last-Event-ID"} {
				if !strings.Contains(headers, h) {
					t.Errorf("Access-Control-Allow-Headers %q lacks %s", headers, h)
				}
			}
			if resp.Header.Get("Access-Control-Max-Age") == "" {
				t.Error("no Access-Control-Max-Age")
			}
			vary := strings.Join(resp.Header.Values("Vary"), ", ")
			for _, v := range []string{"Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers"} {
				if !strings.Contains(vary, v) {
					t.Errorf("Vary %q lacks %s", vary, v)
				}
			}
		})
	}

	// OPTIONS that is not a preflight is an ordinary request: it needs the
	// token, and no endpoint takes OPTIONS.
	if resp, body := e.do("OPTIONS", "/v1/sessions", ""); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("plain OPTIONS: %d %s", resp.StatusCode, body)
	}
}

// TestCORS_EventStream checks that a foreign page cannot read a session's
// events with EventSource: its request is refused and the server sends no
// header that would let the browser hand it the stream, while an allowed
// origin gets exactly its own origin back.
func TestCORS_EventStream(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript(), serve: true,
		config: func(c *httpapi.Config) { c.CORSOrigins = []string{consoleOrigin} }})
	e.createSession("s1")

	resp := e.send("GET", "/v1/sessions/s1/events", "", "Origin", foreignOrigin, "Sec-Fetch-Site", "cross-site",
		"Accept", "text/event-stream")
	if resp.StatusCode == http.StatusOK {
		resp.Body.Close()
		t.Fatalf("a foreign page's EventSource gets the stream (Access-Control-Allow-Origin %q)",
			resp.Header.Get("Access-Control-Allow-Origin"))
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	refused(t, resp, body, http.StatusForbidden, httpapi.CodeOriginNotAllowed)

	tests := []struct {
		name   string
		header []string
		acao   string
	}{
		{"allowed origin", []string{"Origin", consoleOrigin, "Sec-Fetch-Site", "cross-site"}, consoleOrigin},
		{"same origin", []string{"Origin", e.url, "Sec-Fetch-Site", "same-origin"}, ""},
		{"no Origin", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.send("GET", "/v1/sessions/s1/events", "", append([]string{"Accept", "text/event-stream"}, tt.header...)...)
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tt.acao {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tt.acao)
			}
			if got := resp.Header.Get("Access-Control-Allow-Credentials"); got != "" {
				t.Errorf("Access-Control-Allow-Credentials %q", got)
			}
			if !slices.Contains(resp.Header.Values("Vary"), "Origin") {
				t.Errorf("Vary %q lacks Origin", resp.Header.Values("Vary"))
			}
		})
	}
}

// TestErrors_DoNotEchoRequestHeaders checks that refusals describe the
// problem without repeating the offending header.
func TestErrors_DoNotEchoRequestHeaders(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript(), serve: true})
	tests := []struct {
		name   string
		header []string
		status int
		code   string
	}{
		{"Content-Type", []string{"Content-Type", "text/<script>"}, http.StatusUnsupportedMediaType, httpapi.CodeUnsupportedMedia},
		{"Origin", []string{"Origin", "http://<script>.example"}, http.StatusForbidden, httpapi.CodeOriginNotAllowed},
		{"Host", []string{"Host", "evil.example"}, http.StatusMisdirectedRequest, httpapi.CodeHostNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.do("POST", "/v1/sessions", `{"id":"x"}`, tt.header...)
			refused(t, resp, body, tt.status, tt.code)
		})
	}
}
