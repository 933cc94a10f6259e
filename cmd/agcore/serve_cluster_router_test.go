package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// fakeOwners places sessions by a fixed table; every other session is
// owned by def.
type fakeOwners struct {
	owner map[string]string
	def   string
	http  map[string]string
}

func (f fakeOwners) Owner(session string) (string, error) {
	if o, ok := f.owner[session]; ok {
		return o, nil
	}
	return f.def, nil
}

func (f fakeOwners) HTTPAddress(_ context.Context, addr string) (string, error) {
	if h, ok := f.http[addr]; ok {
		return h, nil
	}
	return "", fmt.Errorf("no member %s", addr)
}

// routedMember is one member of the router tests: a runtime, its API
// behind a sessionRouter, served on 127.0.0.1, and the requests its API
// served (the router's checks excluded).
type routedMember struct {
	rt  *actors.Runtime
	srv *httptest.Server

	mu   sync.Mutex
	seen []*http.Request
}

func (m *routedMember) served() []*http.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*http.Request(nil), m.seen...)
}

const (
	routerToken  = "router-test-token"
	routerOrigin = "https://console.example"
)

func newRoutedMember(t *testing.T, self string, owners *fakeOwners) *routedMember {
	t.Helper()
	model := scripted.MustNew(scripted.Script{Stateless: true, Rules: []scripted.Rule{
		{Name: "text", Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "answer from " + self}},
	}}, scripted.Options{})
	rt, err := actors.NewInMemory(actors.Config{Provider: model, Node: self})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Runtime: rt, Token: routerToken, CORSOrigins: []string{routerOrigin}})
	if err != nil {
		t.Fatal(err)
	}
	m := &routedMember{rt: rt}
	local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != guardProbePath {
			m.mu.Lock()
			m.seen = append(m.seen, r.Clone(context.WithoutCancel(r.Context())))
			m.mu.Unlock()
		}
		api.ServeHTTP(w, r)
	})
	ids := 0
	m.srv = httptest.NewServer(&sessionRouter{local: local, owners: owners, self: self, maxBody: httpapi.DefaultMaxBodyBytes,
		newID: func() string { ids++; return fmt.Sprintf("gen-%s-%d", self, ids) }, log: zerolog.Nop()})
	t.Cleanup(func() {
		m.srv.Close()
		_ = api.Shutdown(context.Background())
	})
	return m
}

// do sends a request to base+path with the token and a JSON body (when
// body is not empty), with the headers of hdr, and returns the response
// and its body.
func do(t *testing.T, method, base, path, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+routerToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	if h := hdr["Host"]; h != "" {
		req.Host = h
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// journaled reports whether rt's journal holds session id.
func journaled(t *testing.T, rt *actors.Runtime, id string) bool {
	t.Helper()
	tail, err := rt.Journal().Tail(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tail > 0
}

func errorCode(t *testing.T, body string) string {
	t.Helper()
	var eb struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &eb); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return eb.Error.Code
}

// TestSessionRouter serves a session's requests on its owner: locally on
// the member that owns it, forwarded once to the owner otherwise, refused
// with 503 and Retry-After on a second hop and when the owner does not
// answer, and never forwarded before the receiving member's own checks
// (host, origin, token) pass.
func TestSessionRouter(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close() // nothing listens there any more
	owners := &fakeOwners{owner: map[string]string{"s-a": "a", "s-b": "b", "s-c": "c"}, def: "b", http: map[string]string{"c": downURL}}
	a := newRoutedMember(t, "a", owners)
	b := newRoutedMember(t, "b", owners)
	owners.http["a"], owners.http["b"] = a.srv.URL, b.srv.URL

	t.Run("local", func(t *testing.T) {
		resp, body := do(t, http.MethodPost, a.srv.URL, "/v1/sessions", `{"id":"s-a"}`, nil)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create s-a on a: %d %s", resp.StatusCode, body)
		}
		if !journaled(t, a.rt, "s-a") || journaled(t, b.rt, "s-a") {
			t.Errorf("s-a journaled on a: %v, on b: %v; want a only", journaled(t, a.rt, "s-a"), journaled(t, b.rt, "s-a"))
		}
		if n := len(b.served()); n != 0 {
			t.Errorf("b served %d requests for a's session", n)
		}
	})

	t.Run("proxied", func(t *testing.T) {
		resp, body := do(t, http.MethodPost, a.srv.URL, "/v1/sessions", `{"id":"s-b"}`, nil)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create s-b through a: %d %s", resp.StatusCode, body)
		}
		if journaled(t, a.rt, "s-b") || !journaled(t, b.rt, "s-b") {
			t.Errorf("s-b journaled on a: %v, on b: %v; want b only", journaled(t, a.rt, "s-b"), journaled(t, b.rt, "s-b"))
		}
		before := len(a.served())
		resp, body = do(t, http.MethodPost, a.srv.URL, "/v1/sessions/s-b/turns", `{"input":"hi"}`, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "answer from b") {
			t.Fatalf("turn of s-b through a: %d %s", resp.StatusCode, body)
		}
		if n := len(a.served()) - before; n != 0 {
			t.Errorf("a's API served %d requests of b's session", n)
		}
		seen := b.served()
		last := seen[len(seen)-1]
		if last.URL.Path != "/v1/sessions/s-b/turns" || last.Header.Get(forwardedHeader) != "a" ||
			last.Header.Get("Authorization") != "Bearer "+routerToken {
			t.Errorf("b got %s with %s %q and Authorization %q; want the turn, forwarded by a, with the token",
				last.URL.Path, forwardedHeader, last.Header.Get(forwardedHeader), last.Header.Get("Authorization"))
		}
	})

	t.Run("generated id", func(t *testing.T) {
		resp, body := do(t, http.MethodPost, a.srv.URL, "/v1/sessions", `{}`, nil)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create through a: %d %s", resp.StatusCode, body)
		}
		if loc := resp.Header.Get("Location"); loc != "/v1/sessions/gen-a-1" {
			t.Errorf("Location %q, want the id a generated", loc)
		}
		if journaled(t, a.rt, "gen-a-1") || !journaled(t, b.rt, "gen-a-1") {
			t.Errorf("gen-a-1 journaled on a: %v, on b: %v; want b only (its owner)", journaled(t, a.rt, "gen-a-1"), journaled(t, b.rt, "gen-a-1"))
		}
	})

	t.Run("second hop", func(t *testing.T) {
		before := len(a.served()) + len(b.served())
		resp, body := do(t, http.MethodGet, b.srv.URL, "/v1/sessions/s-a", "", map[string]string{forwardedHeader: "c"})
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			errorCode(t, body) != codeOwnerChanged || !strings.Contains(body, "member a") {
			t.Errorf("second hop: %d Retry-After %q %s; want 503 owner_changed naming a, with Retry-After",
				resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if n := len(a.served()) + len(b.served()) - before; n != 0 {
			t.Errorf("a second hop reached an API %d times", n)
		}
	})

	t.Run("owner down", func(t *testing.T) {
		resp, body := do(t, http.MethodGet, a.srv.URL, "/v1/sessions/s-c", "", nil)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			errorCode(t, body) != codeOwnerUnreachable {
			t.Errorf("owner down: %d Retry-After %q %s; want 503 owner_unreachable with Retry-After",
				resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	})

	t.Run("checked before forwarding", func(t *testing.T) {
		u, _ := url.Parse(a.srv.URL)
		for _, tc := range []struct {
			name string
			hdr  map[string]string
			want int
		}{
			{"no token", map[string]string{"Authorization": ""}, http.StatusUnauthorized},
			{"wrong token", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
			{"foreign host", map[string]string{"Host": "evil.example:" + u.Port()}, http.StatusMisdirectedRequest},
			{"foreign page", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := len(b.served())
				resp, body := do(t, http.MethodPost, a.srv.URL, "/v1/sessions/s-b/turns", `{"input":"hi"}`, tc.hdr)
				if resp.StatusCode != tc.want {
					t.Errorf("status %d %s, want %d", resp.StatusCode, body, tc.want)
				}
				if n := len(b.served()) - before; n != 0 {
					t.Errorf("the request reached the owner (%d requests)", n)
				}
			})
		}
		// The member's own page: allowed, and the owner, which sees no
		// Origin, runs the turn.
		resp, body := do(t, http.MethodPost, a.srv.URL, "/v1/sessions/s-b/turns", `{"input":"hi"}`,
			map[string]string{"Origin": a.srv.URL, "Sec-Fetch-Site": "same-origin"})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("turn from a's own page: %d %s", resp.StatusCode, body)
		}
		seen := b.served()
		if last := seen[len(seen)-1]; last.Header.Get("Origin") != "" || last.Header.Get("Sec-Fetch-Site") != "" {
			t.Errorf("b got Origin %q, Sec-Fetch-Site %q; want neither", last.Header.Get("Origin"), last.Header.Get("Sec-Fetch-Site"))
		}
		// A page of an allowed origin: the owner's answer carries a's grant.
		resp, body = do(t, http.MethodGet, a.srv.URL, "/v1/sessions/s-b", "",
			map[string]string{"Origin": routerOrigin, "Sec-Fetch-Site": "cross-site"})
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != routerOrigin {
			t.Errorf("allowed origin: %d, Access-Control-Allow-Origin %q (%s); want 200 granting %s",
				resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), body, routerOrigin)
		}
	})

	t.Run("not a session", func(t *testing.T) {
		before := len(b.served())
		for _, p := range []string{"/v1/sessions", "/v1/tools", "/healthz"} {
			if resp, body := do(t, http.MethodGet, a.srv.URL, p, "", nil); resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s on a: %d %s", p, resp.StatusCode, body)
			}
		}
		if n := len(b.served()) - before; n != 0 {
			t.Errorf("requests naming no session were forwarded (%d)", n)
		}
	})
}

// TestSessionRouter_Stream forwards a turn's event stream from the owner:
// the events arrive in order, ending with turn_ended.
func TestSessionRouter_Stream(t *testing.T) {
	owners := &fakeOwners{def: "b", http: map[string]string{}}
	a := newRoutedMember(t, "a", owners)
	b := newRoutedMember(t, "b", owners)
	owners.http["a"], owners.http["b"] = a.srv.URL, b.srv.URL
	if resp, body := do(t, http.MethodPost, a.srv.URL, "/v1/sessions", `{"id":"s-1"}`, nil); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	resp, body := do(t, http.MethodPost, a.srv.URL, "/v1/sessions/s-1/turns", `{"input":"hi"}`,
		map[string]string{"Accept": "text/event-stream"})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var types []string
	for line := range strings.SplitSeq(body, "\n") {
		if ev, ok := strings.CutPrefix(line, "event: "); ok {
			types = append(types, ev)
		}
	}
	want := []string{messages.TurnStarted{}.EventType(), messages.TextDelta{}.EventType(), messages.TurnEnded{}.EventType()}
	if got := compactTypes(types, want); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("events %v, want %v in this order", types, want)
	}
	if !strings.Contains(body, "answer from b") {
		t.Errorf("the stream does not carry b's answer:\n%s", body)
	}
}

// compactTypes returns the elements of types that are in keep, each run of
// equal ones once.
func compactTypes(types, keep []string) []string {
	var out []string
	for _, ty := range types {
		for _, k := range keep {
			if ty == k && (len(out) == 0 || out[len(out)-1] != ty) {
				out = append(out, ty)
			}
		}
	}
	return out
}

// TestServeCluster_Usage refuses cluster flags that cannot work, naming
// the flag, before anything starts.
func TestServeCluster_Usage(t *testing.T) {
	nats := []string{"serve", "--cluster", "nats://127.0.0.1:1"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"member flag without --cluster", []string{"serve", "--member-addr", "127.0.0.1:7001"}, "--member-addr needs --cluster"},
		{"seed without --cluster", []string{"serve", "--seed", "127.0.0.1:7101"}, "--seed needs --cluster"},
		{"no member address", nats, "--member-addr"},
		{"no health port", append(nats, "--member-addr", "127.0.0.1:7001"), "--health-port is required"},
		{"no seed", append(nats, "--member-addr", "127.0.0.1:7001", "--health-port", "7101"), "--seed is required"},
		{"bad seed", append(nats, "--member-addr", "127.0.0.1:7001", "--health-port", "7101", "--seed", "nohost"), `--seed "nohost"`},
		{"no streams", append(nats, "--member-addr", "127.0.0.1:7001", "--health-port", "7101", "--seed", "127.0.0.1:7101", "--streams", "0"), "--streams"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			code := run(t.Context(), tc.args, &out, &errOut, func(string) string { return "" })
			if code != exitUsage || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %d naming %s", code, errOut.String(), exitUsage, tc.want)
			}
		})
	}
}
