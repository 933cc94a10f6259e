package actors_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/toolsys"
)

// TestAnswerTool_SiblingCallsDoNotRun: a reply that calls the answer tool
// and another tool ends the turn (or is sent back) without running the
// other tool, whose call is answered with an error result.
func TestAnswerTool_SiblingCallsDoNotRun(t *testing.T) {
	for _, answer := range []string{adaJSON, `{"name":"Ada"}`} {
		var runs atomic.Int32
		write := &funcTool{name: "send_mail", perm: toolsys.PermWrite, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
			runs.Add(1)
			return toolsys.Result{Content: "sent"}, nil
		}}
		script := scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			{Name: "send_mail", Arguments: `{}`}, {Name: messages.AnswerTool, Arguments: answer},
		}}}}}
		g := newGoldenRun(t, nil, script, []toolsys.Tool{write}, nil)
		sess, err := g.rt.Open(t.Context(), "s")
		if err != nil {
			t.Fatal(err)
		}
		_, _, _ = actors.SubmitAs[contact](t.Context(), sess, messages.UserText("go"), actors.WithOutputMode(messages.OutputAnswerTool))
		if n := runs.Load(); n != 0 {
			t.Errorf("answer %s: send_mail ran %d times beside the answer call", answer, n)
		}
		for e, err := range g.j.Read(t.Context(), "s", 1) {
			if err != nil {
				t.Fatal(err)
			}
			if r, ok := e.Event.(messages.ToolResult); ok && r.Name == "send_mail" && (!r.IsError || !strings.Contains(r.Content, "not run")) {
				t.Errorf("send_mail's result %+v, want an error result saying it did not run", r)
			}
		}
	}
}

// TestOutput_Redacted: a credential the model puts in its answer is masked
// in the events and the journal, in the checked answer as in the raw one
// of a failure.
func TestOutput_Redacted(t *testing.T) {
	const secret = "sk-live-7d1e4c2b9a8f6e5d"
	for _, tt := range []struct{ name, reply string }{
		{"checked", `{"name":"` + secret + `","email":"ada@example.org"}`},
		{"refused", `{"name":"` + secret + `"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := redact.New()
			r.Add(secret, "")
			g := newGoldenRun(t, nil, textScript(tt.reply), nil, func(c *actors.Config) { c.Redactor = r })
			sess, err := g.rt.Open(t.Context(), "s")
			if err != nil {
				t.Fatal(err)
			}
			var ended messages.TurnEnded
			for ev, err := range sess.Stream(t.Context(), messages.UserText("who?"), actors.WithOutputSchema("contact", contactSchema(t)), actors.WithOutputRetries(0)) {
				if err != nil {
					t.Fatal(err)
				}
				if e, ok := ev.(messages.TurnEnded); ok {
					ended = e
				}
			}
			b, err := json.Marshal(ended)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), secret) || (ended.Output == nil && ended.OutputFailure == nil) {
				t.Errorf("TurnEnded %s holds the secret, or no answer", b)
			}
			for e, err := range g.j.Read(t.Context(), "s", 1) {
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := json.Marshal(e.Event); strings.Contains(string(b), secret) {
					t.Errorf("journal entry %d holds the secret: %s", e.Envelope.Seq, b)
				}
			}
		})
	}
}

func contactSchema(t *testing.T) json.RawMessage {
	t.Helper()
	s, err := toolsys.ReflectSchema[contact]()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
