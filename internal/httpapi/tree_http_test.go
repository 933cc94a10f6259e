package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/actors"
)

// TestRuntimeTree_MidTurn reads the tree while s1's turn waits in the
// block tool: s1 is running with the block call in flight, s2 (created,
// no turn) is idle, and the services are listed. Without the token the
// route answers 401 and discloses nothing.
func TestRuntimeTree_MidTurn(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript(), token: "secret-token"})
	for _, id := range []string{"s1", "s2"} {
		if r, body := e.do("POST", "/v1/sessions", `{"id":"`+id+`"}`); r.StatusCode != http.StatusCreated {
			t.Fatalf("create %s: %d %s", id, r.StatusCode, body)
		}
	}
	resp := e.send("POST", "/v1/sessions/s1/turns?stream=true", `{"input":"block please"}`)
	defer resp.Body.Close()
	sse := newSSEReader(resp.Body)
	sse.until(t, "tool_started")
	callID := <-e.block.started

	r, body := e.do("GET", "/v1/runtime/tree", "")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("tree: %d %s", r.StatusCode, body)
	}
	tree := decode[actors.Tree](t, body)
	byID := map[string]actors.SessionNode{}
	for _, s := range tree.Sessions {
		byID[s.ID] = s
	}
	s1, s2 := byID["s1"], byID["s2"]
	if s1.State != actors.SessionRunning || len(s1.ToolCalls) != 1 || s1.ToolCalls[0].Name != "block" || s1.ToolCalls[0].ID != callID {
		t.Errorf("s1 = %+v, want running with the block call %s in flight", s1, callID)
	}
	if s2.State != actors.SessionIdle || len(s2.ToolCalls) != 0 {
		t.Errorf("s2 = %+v, want idle", s2)
	}
	if len(tree.Services) < 2 || tree.Services[0].Name != "compactor" || tree.Services[1].Name != "retriever" {
		t.Errorf("services = %+v, want the compactor and the retriever", tree.Services)
	}

	if r, body := e.do("GET", "/v1/runtime/tree", "", "Authorization", ""); r.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), "block") {
		t.Errorf("tree without the token: %d %s, want 401 without the sessions", r.StatusCode, body)
	}
	if r, body := e.do("POST", "/v1/sessions/s1/cancel", ""); r.StatusCode != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.StatusCode, body)
	}
	sse.rest(t)
}
