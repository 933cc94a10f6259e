package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// whoServer is a server whose tool "who" asks a question naming the
// argument it was called with, so that a test can tell which call a
// question came from. With spoof set, the question also carries the
// _meta key the client uses to mark questions, with a value of the
// server's choosing. A call asks only once calls calls have reached the
// server, so that they are all in flight when each question is asked.
func whoServer(spoof string, calls int) *sdk.Server {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	s := sdk.NewServer(&sdk.Implementation{Name: "who", Version: "1"}, requestsDuringCalls)
	type args struct {
		Who string `json:"who"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "who"}, func(ctx context.Context, req *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
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
		p := &sdk.ElicitParams{Message: "question for " + a.Who, RequestedSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"answer": {Type: "string"}}}}
		if spoof != "" {
			p.Meta = sdk.Meta{"agcore/caller": spoof}
		}
		res, err := req.Session.Elicit(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action}}}, nil, nil
	})
	return s
}

// barrierElicit answers every question with accept once n questions are
// waiting; it records each question's attribution by its message.
type barrierElicit struct {
	n    int
	mu   sync.Mutex
	got  map[string]mcp.Attribution
	all  chan struct{}
	once sync.Once
}

func newBarrier(n int) *barrierElicit {
	return &barrierElicit{n: n, got: map[string]mcp.Attribution{}, all: make(chan struct{})}
}

func (b *barrierElicit) ask(ctx context.Context, q mcp.Elicitation) (mcp.ElicitAnswer, error) {
	b.mu.Lock()
	b.got[q.Message] = q.Attribution
	if len(b.got) == b.n {
		b.once.Do(func() { close(b.all) })
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return mcp.ElicitAnswer{Action: mcp.ElicitAccept}, nil
	case <-ctx.Done():
		return mcp.ElicitAnswer{}, ctx.Err()
	}
}

// callConcurrently calls tool "who" once per caller, all at once, each
// with its caller's session as argument, and fails t unless each call was
// answered.
func callConcurrently(t *testing.T, c *mcp.Client, callers []mcp.Caller) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(callers))
	for i, caller := range callers {
		wg.Go(func() {
			ctx := t.Context()
			if caller != (mcp.Caller{}) {
				ctx = mcp.WithCaller(ctx, caller)
			}
			args, _ := json.Marshal(map[string]string{"who": caller.Session + "/" + caller.CallID})
			res, err := c.CallTool(ctx, "who", args)
			switch {
			case err != nil:
				errs[i] = err
			case res.IsError:
				errs[i] = fmt.Errorf("call %v: %s", caller, resultText(t, res))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestAttribution_ExactOverHTTP runs two sessions' calls on the same
// Streamable HTTP server at once: each question is attributed to the call
// whose response stream carried it, although the rule on the calls in
// flight could not tell them apart.
func TestAttribution_ExactOverHTTP(t *testing.T) {
	for _, spoof := range []string{"", "forged-token"} {
		t.Run("spoof="+spoof, func(t *testing.T) {
			srv := whoServer(spoof, 2)
			hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
			t.Cleanup(hs.Close)
			b := newBarrier(2)
			c := connect(t, mcp.ServerConfig{Name: "who", URL: hs.URL, Elicit: b.ask})
			callConcurrently(t, c, []mcp.Caller{{Session: "s1", CallID: "c1"}, {Session: "s2", CallID: "c2"}})
			want := map[string]mcp.Attribution{
				"question for s1/c1": {Session: "s1", CallID: "c1", Candidates: []string{"s1"}, Exact: true},
				"question for s2/c2": {Session: "s2", CallID: "c2", Candidates: []string{"s2"}, Exact: true},
			}
			if diff := cmp.Diff(want, b.got); diff != "" {
				t.Fatalf("attributions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAttribution_RuleWithoutHTTP checks the rule used when the transport
// cannot tie a question to its call (here in-memory, as for stdio): calls
// of two sessions in flight make a question belong to neither, and a mark
// the server forges is not believed.
func TestAttribution_RuleWithoutHTTP(t *testing.T) {
	tests := []struct {
		name    string
		spoof   string
		callers []mcp.Caller
		want    map[string]mcp.Attribution
	}{
		{"one call", "", []mcp.Caller{{Session: "s1", CallID: "c1"}}, map[string]mcp.Attribution{
			"question for s1/c1": {Session: "s1", CallID: "c1", Candidates: []string{"s1"}},
		}},
		{"two calls of one session", "", []mcp.Caller{{Session: "s1", CallID: "c1"}, {Session: "s1", CallID: "c2"}}, map[string]mcp.Attribution{
			"question for s1/c1": {Session: "s1", Candidates: []string{"s1"}},
			"question for s1/c2": {Session: "s1", Candidates: []string{"s1"}},
		}},
		{"two sessions", "", []mcp.Caller{{Session: "s1", CallID: "c1"}, {Session: "s2", CallID: "c2"}}, map[string]mcp.Attribution{
			"question for s1/c1": {Candidates: []string{"s1", "s2"}},
			"question for s2/c2": {Candidates: []string{"s1", "s2"}},
		}},
		{"a call without a caller", "", []mcp.Caller{{Session: "s1", CallID: "c1"}, {}}, map[string]mcp.Attribution{
			"question for s1/c1": {Candidates: []string{"s1"}},
			"question for /":     {Candidates: []string{"s1"}},
		}},
		{"forged mark", "forged-token", []mcp.Caller{{Session: "s1", CallID: "c1"}, {Session: "s2", CallID: "c2"}}, map[string]mcp.Attribution{
			"question for s1/c1": {Candidates: []string{"s1", "s2"}},
			"question for s2/c2": {Candidates: []string{"s1", "s2"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := whoServer(tc.spoof, len(tc.callers))
			m := &inMemory{server: srv}
			t.Cleanup(m.kill)
			b := newBarrier(len(tc.callers))
			cfg := m.config("who")
			cfg.Elicit = b.ask
			c := connect(t, cfg)
			callConcurrently(t, c, tc.callers)
			if diff := cmp.Diff(tc.want, b.got); diff != "" {
				t.Fatalf("attributions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAttribution_ToolAdapterSetsTheCaller checks that a call made through
// the tool adapter is attributed to the session and call of its
// toolsys.Context.
func TestAttribution_ToolAdapterSetsTheCaller(t *testing.T) {
	m := &inMemory{server: whoServer("", 1)}
	t.Cleanup(m.kill)
	b := newBarrier(1)
	cfg := m.config("who")
	cfg.Elicit = b.ask
	c := connect(t, cfg)
	tool := findTool(t, c.Tools(), "mcp__who__who")
	res, err := tool.Execute(t.Context(), json.RawMessage(`{"who":"adapter"}`), &toolsys.Context{SessionID: "sess-9", CallID: "call-4"})
	if err != nil || res.IsError {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	want := mcp.Attribution{Session: "sess-9", CallID: "call-4", Candidates: []string{"sess-9"}}
	if got := b.got["question for adapter"]; !cmp.Equal(got, want) {
		t.Fatalf("attribution = %+v, want %+v", got, want)
	}
	if !strings.HasPrefix(res.Content, "accept") {
		t.Fatalf("result = %q, want the answer's action", res.Content)
	}
}
