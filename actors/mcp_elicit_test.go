package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys/mcp"
)

// askServer is a server whose tool "ask" asks the user for a name
// (default "Ann") and an age, naming in its question the argument "who"
// it was called with, and returns the action and the answer. A call asks
// only once calls calls have reached the server, so that they are in
// flight together.
func askServer(calls int) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	type args struct {
		Who string `json:"who"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "ask"}, func(ctx context.Context, req *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
		mu.Lock()
		if arrived++; arrived == calls {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{
			Message: "Who are you, " + a.Who + "?",
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"name": {Type: "string", Default: json.RawMessage(`"Ann"`)},
				"age":  {Type: "integer"},
			}, Required: []string{"age"}},
		})
		if err != nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "elicit: " + err.Error()}}}, nil, nil
		}
		data, _ := json.Marshal(res.Content)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + string(data)}}}, nil, nil
	})
	return s
}

// memConfig returns a ServerConfig that reaches s over in-memory
// transports, as a stdio server would be reached: the transport cannot
// tie a question to its call.
func memConfig(t *testing.T, name string, s *sdk.Server) mcp.ServerConfig {
	m := &memServer{server: s}
	t.Cleanup(m.closeSessions)
	return m.config(name)
}

// askScript calls mcp__srv__ask with who set to the user's message, for
// the users "alpha" and "beta".
func askScript() scripted.Script {
	var rules []scripted.Rule
	for _, who := range []string{"alpha", "beta"} {
		rules = append(rules, scripted.Rule{Match: scripted.Match{Role: messages.RoleUser, Exact: who},
			Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "call-" + who, Name: "mcp__srv__ask", Arguments: `{"who":"` + who + `"}`}}}})
	}
	rules = append(rules, scripted.Rule{Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "done"}})
	return scripted.Script{Rules: rules}
}

// turnResult plays a turn of sess, hands every ElicitationPending to
// onPending, and returns the events and the content of the tool call's
// ToolFinished.
func turnResult(t *testing.T, sess *actors.Session, input string, onPending func(messages.ElicitationPending)) ([]messages.Event, string) {
	t.Helper()
	var events []messages.Event
	result := ""
	for ev, err := range sess.Stream(t.Context(), messages.UserText(input)) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
		switch e := ev.(type) {
		case messages.ElicitationPending:
			onPending(e)
		case messages.ToolFinished:
			result = e.Content
		}
	}
	return events, result
}

// elicitJournal returns the question events of session's journal, and
// their JSON.
func elicitJournal(t *testing.T, rt *actors.Runtime, session string) ([]messages.JournalEvent, string) {
	t.Helper()
	var out []messages.JournalEvent
	var raw strings.Builder
	for e, err := range rt.Journal().Read(t.Context(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		switch e.Event.(type) {
		case messages.ElicitationRequested, messages.ElicitationResolved:
			out = append(out, e.Event)
			b, _ := json.Marshal(e.Event)
			raw.Write(b)
		}
	}
	return out, raw.String()
}

// TestMCP_ElicitationBelongsToTheSession makes a server's question a
// pending question of the session whose call caused it: published,
// listed, validated (an answer that does not fit is refused with the
// field's name and the question stays pending), answered, and journaled
// without the values given.
func TestMCP_ElicitationBelongsToTheSession(t *testing.T) {
	cfg := memConfig(t, "srv", askServer(1))
	f := newFixture(t, askScript(), nil, func(c *actors.Config) { c.MCPServers = []mcp.ServerConfig{cfg} })
	waitMCP(t, f.rt, "srv")
	var listed []actors.PendingElicitation
	var badErr, goodErr error
	events, result := turnResult(t, f.sess, "alpha", func(e messages.ElicitationPending) {
		listed = f.rt.Elicitations()
		badErr = f.rt.AnswerElicitation(t.Context(), "s1", e.ID, mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: map[string]any{"age": "old"}})
		goodErr = f.rt.AnswerElicitation(t.Context(), "s1", e.ID, mcp.ElicitAnswer{Action: mcp.ElicitAccept,
			Content: map[string]any{"age": 7, "name": "Zed-the-unjournaled"}})
	})
	if len(listed) != 1 || listed[0].Session != "s1" || listed[0].CallID != "call-alpha" || listed[0].Message != "Who are you, alpha?" ||
		!cmp.Equal(listed[0].Fields(), []string{"age", "name"}) || listed[0].Expires.IsZero() {
		t.Fatalf("Elicitations() = %+v, want the question of s1's call-alpha", listed)
	}
	if !errors.Is(badErr, mcp.ErrElicitationInvalid) || !strings.Contains(badErr.Error(), "age") {
		t.Fatalf("an answer with a wrong age: error %v, want mcp.ErrElicitationInvalid naming age", badErr)
	}
	if goodErr != nil {
		t.Fatalf("AnswerElicitation: %v", goodErr)
	}
	if want := `accept {"age":7,"name":"Zed-the-unjournaled"}`; result != want {
		t.Fatalf("tool result %q, want %q", result, want)
	}
	var types []string
	for _, ev := range events {
		if strings.HasPrefix(ev.EventType(), "elicitation") || strings.HasPrefix(ev.EventType(), "tool") {
			types = append(types, ev.EventType())
		}
	}
	if want := []string{"tool_started", "elicitation_pending", "elicitation_answered", "tool_finished"}; !cmp.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	journal, raw := elicitJournal(t, f.rt, "s1")
	id := listed[0].ID
	want := []messages.JournalEvent{
		messages.ElicitationRequested{Turn: 0, ID: id, Server: "srv", CallID: "call-alpha", Message: "Who are you, alpha?", Mode: "form", Fields: []string{"age", "name"}},
		messages.ElicitationResolved{ID: id, Action: "accept", By: actors.AnsweredByCaller, Fields: []string{"age", "name"}},
	}
	if diff := cmp.Diff(want, journal); diff != "" {
		t.Fatalf("journal (-want +got):\n%s", diff)
	}
	if strings.Contains(raw, "Zed-the-unjournaled") {
		t.Fatalf("the journal's question entries hold a value of the answer: %s", raw)
	}
	if left := f.rt.Elicitations(); len(left) != 0 {
		t.Fatalf("Elicitations() after the answer = %+v", left)
	}
	if err := f.rt.AnswerElicitation(t.Context(), "s1", id, mcp.ElicitAnswer{Action: mcp.ElicitDecline}); !errors.Is(err, actors.ErrUnknownElicitation) {
		t.Fatalf("a second answer: %v, want ErrUnknownElicitation", err)
	}
}

// TestMCP_ElicitationExpires cancels a question no one answers within
// ElicitTimeout, and journals the cancellation as the runtime's.
func TestMCP_ElicitationExpires(t *testing.T) {
	cfg := memConfig(t, "srv", askServer(1))
	cfg.ElicitTimeout = 50 * time.Millisecond
	f := newFixture(t, askScript(), nil, func(c *actors.Config) { c.MCPServers = []mcp.ServerConfig{cfg} })
	waitMCP(t, f.rt, "srv")
	events, result := turnResult(t, f.sess, "alpha", func(messages.ElicitationPending) {})
	if result != "cancel null" {
		t.Fatalf("tool result %q, want the server to get cancel", result)
	}
	var answered []messages.ElicitationAnswered
	for _, ev := range events {
		if e, ok := ev.(messages.ElicitationAnswered); ok {
			answered = append(answered, e)
		}
	}
	if len(answered) != 1 || answered[0].Action != "cancel" || answered[0].By != actors.AnsweredByRuntime {
		t.Fatalf("ElicitationAnswered events %+v, want one cancel by the runtime", answered)
	}
	journal, _ := elicitJournal(t, f.rt, "s1")
	if len(journal) != 2 {
		t.Fatalf("journal %+v, want a request and its resolution", journal)
	}
	res, ok := journal[1].(messages.ElicitationResolved)
	if !ok || res.Action != "cancel" || res.By != actors.AnsweredByRuntime || !strings.Contains(res.Reason, "expired") {
		t.Fatalf("resolution %+v, want a cancel by the runtime saying it expired", journal[1])
	}
}

// runBoth plays the turns "alpha" of s1 and "beta" of s2 at once and
// returns each session's tool result and questions.
func runBoth(t *testing.T, rt *actors.Runtime, onPending func(session string, e messages.ElicitationPending)) (map[string]string, map[string][]messages.ElicitationPending) {
	t.Helper()
	results := map[string]string{}
	pending := map[string][]messages.ElicitationPending{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for session, who := range map[string]string{"s1": "alpha", "s2": "beta"} {
		sess, err := rt.Open(t.Context(), session)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			_, result := turnResult(t, sess, who, func(e messages.ElicitationPending) {
				mu.Lock()
				pending[session] = append(pending[session], e)
				mu.Unlock()
				onPending(session, e)
			})
			mu.Lock()
			results[session] = result
			mu.Unlock()
		})
	}
	wg.Wait()
	return results, pending
}

// TestMCP_ElicitationExactOverHTTP runs calls of two sessions on one
// Streamable HTTP server at once: each session gets the question of its
// own call, and only that one.
func TestMCP_ElicitationExactOverHTTP(t *testing.T) {
	srv := askServer(2)
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	f := newFixture(t, askScript(), nil, func(c *actors.Config) {
		c.MCPServers = []mcp.ServerConfig{{Name: "srv", URL: hs.URL}}
	})
	waitMCP(t, f.rt, "srv")
	ages := map[string]int{"s1": 31, "s2": 42}
	results, pending := runBoth(t, f.rt, func(session string, e messages.ElicitationPending) {
		if err := f.rt.AnswerElicitation(t.Context(), session, e.ID, mcp.ElicitAnswer{Action: mcp.ElicitAccept,
			Content: map[string]any{"age": ages[session]}}); err != nil {
			t.Errorf("AnswerElicitation(%s): %v", session, err)
		}
	})
	for session, who := range map[string]string{"s1": "alpha", "s2": "beta"} {
		if ps := pending[session]; len(ps) != 1 || ps[0].Message != "Who are you, "+who+"?" || ps[0].CallID != "call-"+who {
			t.Errorf("session %s was asked %+v, want only the question of its call-%s", session, ps, who)
		}
	}
	want := map[string]string{"s1": `accept {"age":31,"name":"Ann"}`, "s2": `accept {"age":42,"name":"Ann"}`}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Fatalf("tool results (-want +got):\n%s", diff)
	}
}

// TestMCP_ElicitationAmbiguousGoesToTheRuntime runs calls of two sessions
// on one server whose transport cannot tie a question to its call: the
// questions are shown to neither session, and wait in the runtime's list
// with both sessions as candidates.
func TestMCP_ElicitationAmbiguousGoesToTheRuntime(t *testing.T) {
	cfg := memConfig(t, "srv", askServer(2))
	f := newFixture(t, askScript(), nil, func(c *actors.Config) { c.MCPServers = []mcp.ServerConfig{cfg} })
	waitMCP(t, f.rt, "srv")
	var mu sync.Mutex
	var seen []actors.PendingElicitation
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The runtime's list is read as a front end would, at each of its
		// changes, until it holds both questions (both calls are then in
		// flight); then both are answered.
		for {
			changed := f.rt.ElicitationsChanged()
			if ps := f.rt.Elicitations(); len(ps) == 2 {
				mu.Lock()
				seen = ps
				mu.Unlock()
				break
			}
			select {
			case <-t.Context().Done():
				return
			case <-changed:
			}
		}
		for _, p := range seen {
			if err := f.rt.AnswerElicitation(t.Context(), "", p.ID, mcp.ElicitAnswer{Action: mcp.ElicitDecline}); err != nil {
				t.Errorf("AnswerElicitation: %v", err)
			}
		}
	}()
	results, pending := runBoth(t, f.rt, func(string, messages.ElicitationPending) {})
	<-done
	if len(pending) != 0 {
		t.Fatalf("questions shown to sessions: %+v, want none", pending)
	}
	if len(seen) != 2 {
		t.Fatalf("runtime list showed %+v, want both questions", seen)
	}
	for _, p := range seen {
		if p.Session != "" || p.CallID != "" || !cmp.Equal(p.Candidates, []string{"s1", "s2"}) {
			t.Errorf("question %+v, want no session and candidates s1, s2", p)
		}
	}
	want := map[string]string{"s1": "decline null", "s2": "decline null"}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Fatalf("tool results (-want +got):\n%s", diff)
	}
	for _, s := range []string{"s1", "s2"} {
		if j, _ := elicitJournal(t, f.rt, s); len(j) != 0 {
			t.Errorf("session %s journaled %+v, want nothing", s, j)
		}
	}
}

// TestMCP_ElicitationCallbackTakesPrecedence gives the questions to
// ServerConfig.Elicit when it is set, with their attribution, and makes
// no pending question of them.
func TestMCP_ElicitationCallbackTakesPrecedence(t *testing.T) {
	cfg := memConfig(t, "srv", askServer(1))
	var got []mcp.Elicitation
	cfg.Elicit = func(_ context.Context, q mcp.Elicitation) (mcp.ElicitAnswer, error) {
		got = append(got, q)
		return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: map[string]any{"age": 3}}, nil
	}
	f := newFixture(t, askScript(), nil, func(c *actors.Config) { c.MCPServers = []mcp.ServerConfig{cfg} })
	waitMCP(t, f.rt, "srv")
	events, result := turnResult(t, f.sess, "alpha", func(e messages.ElicitationPending) {
		t.Errorf("ElicitationPending %+v with a callback set", e)
	})
	if result != `accept {"age":3,"name":"Ann"}` {
		t.Fatalf("tool result %q", result)
	}
	if len(got) != 1 || got[0].Session != "s1" || got[0].CallID != "call-alpha" {
		t.Fatalf("callback got %+v, want the question attributed to s1's call-alpha", got)
	}
	_ = events
}

// TestMCP_ElicitationCancelledAtShutdown cancels a pending question when
// the runtime shuts down, rather than holding the shutdown until the
// question expires.
func TestMCP_ElicitationCancelledAtShutdown(t *testing.T) {
	m := &memServer{server: askServer(1)}
	t.Cleanup(m.closeSessions)
	prov, err := scripted.New(askScript(), scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := actors.NewInMemory(actors.Config{Provider: prov, MCPServers: []mcp.ServerConfig{m.config("srv")}})
	if err != nil {
		t.Fatal(err)
	}
	waitMCP(t, rt, "srv")
	m.mu.Lock()
	ss := m.sessions[len(m.sessions)-1]
	m.mu.Unlock()
	asked := make(chan string, 1)
	changed := rt.ElicitationsChanged()
	go func() {
		res, err := ss.Elicit(context.Background(), &sdk.ElicitParams{Message: "Still there?",
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"yes": {Type: "boolean"}}}})
		if err != nil {
			asked <- "error: " + err.Error()
			return
		}
		asked <- res.Action
	}()
	select {
	case <-changed:
	case <-t.Context().Done():
		t.Fatal("the question never reached the runtime's list")
	}
	if ps := rt.Elicitations(); len(ps) != 1 || ps[0].Session != "" {
		t.Fatalf("Elicitations() = %+v, want one question of no session", ps)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a question pending: %v", err)
	}
	// The cancellation races with the end of the connection: the server
	// gets either, but never waits for the question's expiry.
	if got := <-asked; got != "cancel" && !strings.HasPrefix(got, "error: ") {
		t.Fatalf("the server got %q, want cancel or the end of the connection", got)
	}
}

// TestMCP_ElicitationWithdrawn cancels, and journals as the runtime's, a
// question the server stops waiting for (here after 50ms of its own): it
// does not stay pending until it expires.
func TestMCP_ElicitationWithdrawn(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "impatient", Version: "1"}, &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	sdk.AddTool(s, &sdk.Tool{Name: "ask"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct {
		Who string `json:"who"`
	}) (*sdk.CallToolResult, any, error) {
		qctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err := req.Session.Elicit(qctx, &sdk.ElicitParams{Message: "Quick?",
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"yes": {Type: "boolean"}}}})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("gave up: %v", err != nil)}}}, nil, nil
	})
	cfg := memConfig(t, "srv", s)
	f := newFixture(t, askScript(), nil, func(c *actors.Config) { c.MCPServers = []mcp.ServerConfig{cfg} })
	waitMCP(t, f.rt, "srv")
	var answered []messages.ElicitationAnswered
	events, _ := turnResult(t, f.sess, "alpha", func(messages.ElicitationPending) {})
	for _, ev := range events {
		if e, ok := ev.(messages.ElicitationAnswered); ok {
			answered = append(answered, e)
		}
	}
	if len(answered) != 1 || answered[0].Action != "cancel" || answered[0].By != actors.AnsweredByRuntime {
		t.Fatalf("ElicitationAnswered events %+v, want one cancel by the runtime", answered)
	}
	journal, _ := elicitJournal(t, f.rt, "s1")
	if len(journal) != 2 {
		t.Fatalf("journal %+v, want the question and its cancellation", journal)
	}
	// The server's cancellation and the end of the call race to the
	// session: either ends the question.
	if res, ok := journal[1].(messages.ElicitationResolved); !ok || res.Action != "cancel" ||
		!strings.Contains(res.Reason, "withdrew") && !strings.Contains(res.Reason, "turn ended") {
		t.Fatalf("resolution %+v, want a cancel saying the server withdrew the question or the turn ended", journal[1])
	}
}
