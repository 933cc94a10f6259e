package actors_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// TestSession_History checks that History returns the conversation as the
// model saw it: the last request's messages (without the system prompt),
// tool replies included, then the final reply; a cancelled call reads as
// interrupted, as it did for the model; a session never used has none.
func TestSession_History(t *testing.T) {
	block := &funcTool{name: "block", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		<-ctx.Done()
		return toolsys.Result{}, ctx.Err()
	}}
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "wait"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "block", Arguments: "{}"}}}},
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "echo", Arguments: `{"x":1}`}}}},
		{Match: scripted.Match{Tool: "echo"}, Reply: scripted.Reply{Text: "echoed"}},
	}}
	g := newGoldenRun(t, nil, script, []toolsys.Tool{echoTool("echo"), block}, func(c *actors.Config) { c.BasePrompt = "Be brief." })
	sess, err := g.rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if h, err := sess.History(t.Context()); err != nil || len(h) != 0 {
		t.Fatalf("History of a new session = %v, %v; want none", h, err)
	}
	res, err := sess.Submit(t.Context(), messages.UserText("echo it"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := g.prov.requests()
	last := reqs[len(reqs)-1].Messages
	if last[0].Role != messages.RoleSystem {
		t.Fatalf("the request has no system prompt: %+v", last[0])
	}
	want := append(append([]messages.Message(nil), last[1:]...), messages.Message{Role: messages.RoleAssistant, Content: messages.Text(res.Text)})
	got, err := sess.History(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
	if len(got) != 4 || got[2].Role != messages.RoleTool || got[2].Text() != `echo:{"x":1}` {
		t.Errorf("History lacks the tool reply: %+v", got)
	}

	for ev, err := range sess.Stream(t.Context(), messages.UserText("wait")) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(messages.ToolStarted); ok {
			if _, err := sess.Cancel(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err = sess.History(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got); n != 7 || got[6].Role != messages.RoleTool || !strings.Contains(got[6].Text(), "interrupted") {
		t.Errorf("History after a cancelled call = %+v, want its call answered as interrupted", got)
	}
}
