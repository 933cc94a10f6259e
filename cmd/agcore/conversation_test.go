package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// newTestConversation returns a conversation over the scripted model s, with
// the file tools working in a seeded temporary workspace, printing to out.
func newTestConversation(t *testing.T, s scripted.Script, out *bytes.Buffer) (*conversation, string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := seedWorkspace(dir); err != nil {
		t.Fatal(err)
	}
	ws, err := toolsys.NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := fileTools(zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	tb := &toolbox{reg: reg, workspace: ws, session: "test", log: zerolog.Nop()}
	p, err := scripted.New(s, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &conversation{
		provider: p, tools: tb, out: &printer{w: out}, usage: &providers.Tracker{}, maxSteps: 8, log: zerolog.Nop(),
	}, dir
}

func TestConversation_Demo(t *testing.T) {
	var out bytes.Buffer
	c, dir := newTestConversation(t, scripted.Demo(), &out)
	history, err := c.run(t.Context(), []messages.Message{messages.UserText("summarise")})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}

	// The model called list_dir, then read_file twice in parallel, then
	// write_file, then answered: 4 replies and 4 tool results.
	var roles []string
	for _, m := range history[1:] {
		roles = append(roles, string(m.Role))
	}
	if got, want := strings.Join(roles, ","), "assistant,tool,assistant,tool,tool,assistant,tool,assistant"; got != want {
		t.Fatalf("history roles = %s, want %s", got, want)
	}
	// Tool results answer their calls in call order.
	reads := history[3]
	for i, m := range history[4:6] {
		if m.ToolCallID != reads.ToolCalls[i].ID {
			t.Errorf("tool message %d answers %q, want %q", i, m.ToolCallID, reads.ToolCalls[i].ID)
		}
	}
	if !strings.Contains(history[4].Text(), "greeter") || !strings.Contains(history[5].Text(), "module example.com/greeter") {
		t.Errorf("read results out of order:\n%s\n---\n%s", history[4].Text(), history[5].Text())
	}

	summary, err := os.ReadFile(filepath.Join(dir, "SUMMARY.md"))
	if err != nil || !strings.HasPrefix(string(summary), "# Summary") {
		t.Errorf("SUMMARY.md = %q, %v", summary, err)
	}
	for _, want := range []string{
		"Let me look at the workspace first.\n→ list_dir {\"path\":\".\"}\n← list_dir: ",
		"→ read_file {\"path\":\"README.md\"}\n→ read_file {\"path\":\"go.mod\"}\n← read_file: ",
		"→ write_file {\"path\":\"SUMMARY.md\",",
		"wrote a short summary of the project to SUMMARY.md.\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if u, _ := c.usage.Total(); u.TotalTokens == 0 {
		t.Errorf("no usage recorded")
	}
}

func TestConversation_Errors(t *testing.T) {
	loop := scripted.Script{Stateless: true, Rules: []scripted.Rule{{
		Match: scripted.Match{Any: true},
		Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "list_dir", Arguments: `{}`}}},
	}}}
	failing := scripted.Script{Rules: []scripted.Rule{{
		Match: scripted.Match{Any: true},
		Reply: scripted.Reply{Fail: &scripted.Failure{Kind: scripted.FailAuth}},
	}}}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name   string
		script scripted.Script
		ctx    context.Context
		check  func(error) bool
	}{
		{"too many steps", loop, t.Context(), func(err error) bool { return errors.Is(err, errMaxSteps) }},
		{"provider error", failing, t.Context(), func(err error) bool { return providers.KindOf(err) == providers.KindAuthentication }},
		{"cancelled", loop, cancelled, func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			c, _ := newTestConversation(t, tt.script, &out)
			_, err := c.run(tt.ctx, []messages.Message{messages.UserText("go")})
			if err == nil || !tt.check(err) {
				t.Fatalf("run error = %v", err)
			}
		})
	}
}
