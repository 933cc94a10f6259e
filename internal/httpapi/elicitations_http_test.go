package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys/mcp"
)

// waitUnattributed waits until the runtime lists a question of no single
// session, and returns its id.
func waitUnattributed(t *testing.T, e *env) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		changed := e.rt.ElicitationsChanged()
		for _, p := range e.rt.Elicitations() {
			if p.Session == "" {
				return p.ID
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("no question of no single session was listed")
		}
	}
}

// TestElicitations_AnswerOverHTTP answers an MCP server's question of a
// session through the API: listed with its form, refused without the
// token, from a foreign page, with an unknown action or a field that does
// not fit (the message names it), each time left pending; then accepted.
func TestElicitations_AnswerOverHTTP(t *testing.T) {
	a := newAsker(t)
	e := newEnv(t, envOptions{script: exploreScript(), token: "tok", mcp: []mcpConfig{a.config()}})
	waitReady(t, e, "ask")
	e.createSession("s1")
	stream := e.send("POST", "/v1/sessions/s1/turns", `{"input":"elicit an answer"}`, "Accept", "text/event-stream")
	defer stream.Body.Close()
	sse := newSSEReader(stream.Body)
	frames := sse.until(t, "elicitation_pending")
	pending := frames[len(frames)-1].event(t).(messages.ElicitationPending)
	if pending.Server != "ask" || pending.Message != "How old are you?" || !cmp.Equal(pending.Fields, []string{"age", "name"}) {
		t.Fatalf("elicitation_pending = %+v", pending)
	}
	path := "/v1/sessions/s1/elicitations/" + pending.ID

	_, body := e.do("GET", "/v1/sessions/s1/elicitations", "")
	list := decode[httpapi.ElicitationList](t, body)
	if len(list.Elicitations) != 1 {
		t.Fatalf("list = %s", body)
	}
	got := list.Elicitations[0]
	want := []httpapi.ElicitationField{
		{Name: "age", Type: "integer", Title: "Age", Required: true},
		{Name: "name", Type: "string", Description: "What to call you", Default: "Ann"},
	}
	if got.ID != pending.ID || got.Session != "s1" || got.CallID == "" || !cmp.Equal(got.Fields, want) {
		t.Fatalf("listed %+v, want the question with fields %+v", got, want)
	}

	stillPending := func(t *testing.T) {
		t.Helper()
		_, body := e.do("GET", "/v1/sessions/s1/elicitations", "")
		if l := decode[httpapi.ElicitationList](t, body); len(l.Elicitations) != 1 {
			t.Fatalf("the question was answered: %s", body)
		}
	}
	refusals := []struct {
		name, body string
		header     []string
		status     int
		code, says string
	}{
		{"no token", `{"action":"accept","content":{"age":3}}`, []string{"Authorization", ""}, 401, httpapi.CodeUnauthorized, ""},
		{"foreign page", `{"action":"accept","content":{"age":3}}`, []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"},
			403, httpapi.CodeOriginNotAllowed, ""},
		{"form from a page", `action=accept`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, httpapi.CodeUnsupportedMedia, ""},
		{"no action", `{"content":{"age":3}}`, nil, 400, httpapi.CodeBadRequest, `"action"`},
		{"unknown action", `{"action":"maybe"}`, nil, 400, httpapi.CodeBadRequest, `"action"`},
		{"content with decline", `{"action":"decline","content":{"age":3}}`, nil, 400, httpapi.CodeBadRequest, `"content"`},
		{"wrong type", `{"action":"accept","content":{"age":"old"}}`, nil, 400, httpapi.CodeBadRequest, "age"},
		{"missing required field", `{"action":"accept","content":{"name":"Bo"}}`, nil, 400, httpapi.CodeBadRequest, "age"},
		{"unknown member", `{"action":"accept","extra":1}`, nil, 400, httpapi.CodeUnknownField, "extra"},
		{"other session", `{"action":"decline"}`, nil, 404, httpapi.CodeSessionNotFound, ""},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			p := path
			if r.name == "other session" {
				p = "/v1/sessions/nope/elicitations/" + pending.ID
			}
			resp, body := e.do("POST", p, r.body, r.header...)
			if resp.StatusCode != r.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, r.status, body)
			}
			if eb := errorBody(t, body); eb.Code != r.code || !strings.Contains(eb.Message, r.says) {
				t.Fatalf("error %+v, want code %s naming %s", eb, r.code, r.says)
			}
			stillPending(t)
		})
	}

	resp, body := e.do("POST", path, `{"action":"accept","content":{"age":5}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("answer: %d %s", resp.StatusCode, body)
	}
	if r := decode[httpapi.ElicitationResult](t, body); r != (httpapi.ElicitationResult{Session: "s1", ID: pending.ID, Action: "accept"}) {
		t.Fatalf("result %+v", r)
	}
	var finished messages.ToolFinished
	for _, f := range sse.rest(t) {
		if f.Event == "tool_finished" {
			finished = f.event(t).(messages.ToolFinished)
		}
	}
	if finished.Content != `accept {"age":5,"name":"Ann"}` {
		t.Fatalf("the server got %q, want the answer with its default", finished.Content)
	}
	resp, body = e.do("POST", path, `{"action":"decline"}`)
	if resp.StatusCode != 404 || errorBody(t, body).Code != httpapi.CodeElicitationNotFound {
		t.Fatalf("a second answer: %d %s, want 404 %s", resp.StatusCode, body, httpapi.CodeElicitationNotFound)
	}
}

// TestElicitations_Unattributed lists a question of no single session in
// GET /v1/elicitations only, refuses to answer it as a session's, and
// answers it through POST /v1/elicitations/{id}.
func TestElicitations_Unattributed(t *testing.T) {
	a := newAsker(t)
	e := newEnv(t, envOptions{script: exploreScript(), token: "tok", mcp: []mcpConfig{a.config()}})
	waitReady(t, e, "ask")
	e.createSession("s1")
	answered := a.askNow(t.Context())
	id := waitUnattributed(t, e)

	_, body := e.do("GET", "/v1/elicitations", "")
	list := decode[httpapi.ElicitationList](t, body)
	if len(list.Elicitations) != 1 || list.Elicitations[0].Session != "" || list.Elicitations[0].Message != "Anyone there?" {
		t.Fatalf("GET /v1/elicitations = %s", body)
	}
	if _, body := e.do("GET", "/v1/sessions/s1/elicitations", ""); !bytes.Equal(bytes.TrimSpace(body), []byte(`{"elicitations":[]}`)) {
		t.Fatalf("the session lists %s, want nothing", body)
	}
	if resp, body := e.do("POST", "/v1/sessions/s1/elicitations/"+id, `{"action":"accept","content":{"age":1}}`); resp.StatusCode != 404 {
		t.Fatalf("answered as s1's: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.do("POST", "/v1/elicitations/"+id, `{"action":"decline"}`, "Authorization", ""); resp.StatusCode != 401 {
		t.Fatalf("answered without the token: %d %s", resp.StatusCode, body)
	}
	resp, body := e.do("POST", "/v1/elicitations/"+id, `{"action":"decline"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("answer: %d %s", resp.StatusCode, body)
	}
	if got := <-answered; got != "decline" {
		t.Fatalf("the server got %q, want decline", got)
	}
}

// FuzzElicitationAnswer posts arbitrary bodies as the answer to a pending
// question: the server never fails (5xx), and only a valid answer is
// taken, one whose content fits the form.
func FuzzElicitationAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"action":"accept","content":{"age":3}}`,
		`{"action":"accept","content":{"age":3.5,"name":7}}`,
		`{"action":"decline"}`,
		`{"action":"cancel","content":null}`,
		`{"action":"accept","content":[]}`,
		`{"action":"ACCEPT"}`,
		`{"action":"accept","content":{"age":1e400}}`,
		`{"action":"accept","Action":"decline","content":{"age":2}}`,
		`{`,
		``,
	} {
		f.Add([]byte(seed))
	}
	a := newAsker(f)
	script := scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}}}}
	e := newEnv(f, envOptions{script: script, mcp: []mcpConfig{a.config()}})
	waitReady(f, e, "ask")
	var answered <-chan string
	id := ""
	f.Fuzz(func(t *testing.T, body []byte) {
		if id == "" {
			answered = a.askNow(context.Background())
			id = waitUnattributed(t, e)
		}
		req := httptest.NewRequestWithContext(t.Context(), "POST", "http://"+hostOf(e)+"/v1/elicitations/"+id, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, req)
		switch {
		case rec.Code >= 500 || rec.Code < 200:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		case rec.Code >= 400:
			errorBody(t, rec.Body.Bytes())
			return
		}
		var sent struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		}
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatalf("%q was taken but is not an answer: %v", body, err)
		}
		got := <-answered
		id = ""
		if got != sent.Action {
			t.Fatalf("%q: the server got %q", body, got)
		}
		if sent.Action == "accept" {
			age, ok := sent.Content["age"].(float64)
			if !ok || age != float64(int64(age)) {
				t.Fatalf("%q was taken without an integer age", body)
			}
		}
	})
}

// mcpConfig is the type of envOptions.mcp's elements.
type mcpConfig = mcp.ServerConfig

// waitReady waits until the runtime's MCP server is connected.
func waitReady(t testing.TB, e *env, server string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.rt.MCP(server).Ready(ctx); err != nil {
		t.Fatalf("MCP(%s).Ready: %v", server, err)
	}
}

// checkElicitationRoutes exercises the question routes for
// TestOpenAPI_ResponsesMatchSchemas: a question of session s1 streamed,
// listed and answered, one of no single session listed and answered, and
// their errors.
func checkElicitationRoutes(t *testing.T, c *conformance, e *env, a *asker) {
	t.Helper()
	const (
		turns     = "POST /v1/sessions/{id}/turns"
		list      = "GET /v1/sessions/{id}/elicitations"
		answer    = "POST /v1/sessions/{id}/elicitations/{elicitation_id}"
		listAll   = "GET /v1/elicitations"
		answerAny = "POST /v1/elicitations/{elicitation_id}"
	)
	waitReady(t, e, "ask")
	streamed := e.send("POST", "/v1/sessions/s1/turns", `{"input":"elicit an answer"}`, "Accept", "text/event-stream")
	defer streamed.Body.Close()
	ptr := c.response(turns, streamed)
	sse := newSSEReader(streamed.Body)
	frames := sse.until(t, "elicitation_pending")
	id := frames[len(frames)-1].event(t).(messages.ElicitationPending).ID
	if body := c.check(list, 200, "GET", "/v1/sessions/s1/elicitations", ""); !bytes.Contains(body, []byte(id)) {
		t.Errorf("questions %s lack %s", body, id)
	}
	if body := c.check(listAll, 200, "GET", "/v1/elicitations", ""); !bytes.Contains(body, []byte(id)) {
		t.Errorf("every question %s lacks %s", body, id)
	}
	c.check(answer, 400, "POST", "/v1/sessions/s1/elicitations/"+id, `{"action":"perhaps"}`)
	c.check(answer, 200, "POST", "/v1/sessions/s1/elicitations/"+id, `{"action":"accept","content":{"age":9}}`)
	c.check(answer, 404, "POST", "/v1/sessions/s1/elicitations/"+id, `{"action":"cancel"}`)
	c.check(answer, 404, "POST", "/v1/sessions/nope/elicitations/"+id, `{"action":"cancel"}`)
	frames = append(frames, sse.rest(t)...)
	if got := types(frames); !slices.Contains(got, "elicitation_answered") || got[len(got)-1] != "turn_ended" {
		t.Errorf("streamed turn: %v", got)
	}
	for _, f := range frames {
		c.frame(ptr, f)
	}

	answered := a.askNow(t.Context())
	other := waitUnattributed(t, e)
	c.check(answerAny, 400, "POST", "/v1/elicitations/"+other, `{}`)
	c.check(answerAny, 200, "POST", "/v1/elicitations/"+other, `{"action":"cancel"}`)
	c.check(answerAny, 404, "POST", "/v1/elicitations/"+other, `{"action":"cancel"}`)
	if got := <-answered; got != "cancel" {
		t.Errorf("the server got %q, want cancel", got)
	}
}
