package actors_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
)

// TestPrompts_LoadDir loads a folder whose templates share partials, and
// renders them.
func TestPrompts_LoadDir(t *testing.T) {
	p := actors.NewPrompts()
	if err := p.LoadDir("testdata/prompts"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Names(), ","); got != "_partials,coder,hdr,reviewer,rules" {
		t.Errorf("Names() = %s", got)
	}
	data := map[string]any{"Company": "Acme", "Language": "English"}
	for name, want := range map[string]string{
		"coder":    "You work for Acme. You write code. Answer in English.",
		"reviewer": "You work for Acme. You review code.",
	} {
		got, err := p.Render(name, data)
		if err != nil || strings.TrimSpace(got) != want {
			t.Errorf("Render(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestPrompts_Errors checks that a missing template or variable is an
// error naming it, at registration when it can be known then.
func TestPrompts_Errors(t *testing.T) {
	p := actors.NewPrompts()
	if err := p.LoadDir("testdata/prompts"); err != nil {
		t.Fatal(err)
	}
	_, err := p.Render("nosuch", nil)
	if !errors.Is(err, actors.ErrUnknownPrompt) || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("Render(nosuch) = %v, want ErrUnknownPrompt naming it", err)
	}
	_, err = p.Render("coder", map[string]any{"Company": "Acme"})
	if err == nil || !strings.Contains(err.Error(), "Language") {
		t.Errorf("Render(coder) without Language = %v, want an error naming it", err)
	}
	err = p.Add("greeter", `{{template "footer" .}} Hello.`)
	if !errors.Is(err, actors.ErrUnknownPrompt) || !strings.Contains(err.Error(), `"footer"`) || !strings.Contains(err.Error(), `"greeter"`) {
		t.Errorf("Add with an undefined partial = %v, want ErrUnknownPrompt naming both", err)
	}
	if err := p.Add("coder", "again"); err == nil || !strings.Contains(err.Error(), `"coder"`) {
		t.Errorf("Add of a taken name = %v", err)
	}
	bad := fstest.MapFS{"a.tmpl": {Data: []byte("{{define \"x\"}}1{{end}}")}, "b.tmpl": {Data: []byte("{{define \"x\"}}2{{end}}")}}
	if err := actors.NewPrompts().LoadFS(bad, "."); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("LoadFS with a template defined twice = %v", err)
	}
	broken := fstest.MapFS{"a.tmpl": {Data: []byte("{{.X")}}
	if err := actors.NewPrompts().LoadFS(broken, "."); err == nil || !strings.Contains(err.Error(), "a.tmpl") {
		t.Errorf("LoadFS with a broken file = %v, want an error naming it", err)
	}
}

// TestPrompts_InAgents gives agent prompts and the base prompt the
// registry's templates and partials, and refuses at New a prompt that
// names a template the registry lacks.
func TestPrompts_InAgents(t *testing.T) {
	p := actors.NewPrompts()
	if err := p.LoadDir("testdata/prompts"); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	f := newFixture(t, textScript("ok"), nil, func(c *actors.Config) {
		c.Prompts = p
		c.PromptVars = map[string]any{"Company": "Acme", "Language": "French"}
		c.BasePrompt = `{{template "rules" .}}`
		c.Agents = []actors.AgentProfile{{Name: "coder", Prompt: `{{template "coder" .}}`}}
		c.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
	})
	if _, err := f.sess.Submit(t.Context(), messages.UserText("hi")); err != nil {
		t.Fatal(err)
	}
	sys := rec.last(actors.PreRequest).Request.Messages[0].Text()
	if !strings.Contains(sys, "Answer in French.\n\nYou work for Acme. You write code. Answer in French.") {
		t.Errorf("system prompt = %q", sys)
	}
	_, err := actors.NewInMemory(actors.Config{Provider: f.prov, Prompts: p,
		Agents: []actors.AgentProfile{{Name: "a", Prompt: `{{template "nosuch" .}}`}}})
	if !errors.Is(err, actors.ErrConfig) || !strings.Contains(err.Error(), `Agents[0].Prompt`) || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("New with an undefined template = %v", err)
	}
}
