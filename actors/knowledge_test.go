package actors_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/knowledge"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// newKnowledge opens an in-memory store holding pages and returns it with
// a retriever over them.
func newKnowledge(t *testing.T, pages ...knowledge.Page) (*memory.Store, *knowledge.Retriever) {
	t.Helper()
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	kb, err := knowledge.New(store, knowledge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if _, err := kb.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	r, err := knowledge.NewRetriever(kb, knowledge.RetrieverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return store, r
}

var supervisionPage = knowledge.Page{ID: "supervision", Title: "Supervision trees",
	Summary: "How failed actors are restarted.",
	Content: "A supervisor restarts a failed session actor, which rebuilds its state from the journal."}

func TestKnowledgeFrom_RetrieveToolAndPromptLayer(t *testing.T) {
	store, r := newKnowledge(t, supervisionPage,
		knowledge.Page{ID: "cooking", Title: "Bread recipes", Content: "Flour, water, salt and yeast."})
	script := toolScript("answered", scripted.ToolCall{Name: "retrieve", Arguments: `{"query":"supervision trees"}`})
	prov := scripted.MustNew(script, scripted.Options{})
	rec := &recorder{}
	cfg := actors.Config{Provider: prov, Store: store, Durability: memory.DurabilityNone,
		Knowledge: actors.KnowledgeFrom(r),
		Agents:    []actors.AgentProfile{{Name: "librarian", Retrieve: true}}}
	cfg.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
	rt, err := actors.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	sess, err := rt.Open(t.Context(), "k1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.Submit(t.Context(), messages.UserText("how do supervision trees work?"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].IsError {
		t.Fatalf("tool calls = %+v", res.ToolCalls)
	}
	got := res.ToolCalls[0].Content
	for _, want := range []string{"Supervision trees", "rebuilds its state from the journal"} {
		if !strings.Contains(got, want) {
			t.Errorf("retrieve result %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "Bread") {
		t.Errorf("retrieve result %q holds an unrelated page", got)
	}

	last := rec.last(actors.PreRequest)
	if last == nil || len(last.Request.Messages) == 0 || last.Request.Messages[0].Role != messages.RoleSystem {
		t.Fatalf("the last request has no system prompt: %+v", last)
	}
	system := last.Request.Messages[0].Text()
	for _, want := range []string{"<knowledge>", "## Supervision trees", "How failed actors are restarted.", "</knowledge>"} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, system)
		}
	}
	var toolMsg string
	for _, m := range last.Request.Messages {
		if m.Role == messages.RoleTool {
			toolMsg = m.Text()
		}
	}
	if !strings.Contains(toolMsg, "rebuilds its state from the journal") {
		t.Errorf("the model did not get the retrieved page as the tool result: %q", toolMsg)
	}
	found := false
	for _, d := range last.Request.Tools {
		found = found || d.Name == "retrieve"
	}
	if !found {
		t.Error("the retrieve tool was not offered to the agent")
	}
}

func TestKnowledgeFrom_Passages(t *testing.T) {
	long := strings.Repeat("actor journal ", 400)
	_, r := newKnowledge(t, supervisionPage,
		knowledge.Page{ID: "long", Title: "Supervision of long pages", Content: long},
		knowledge.Page{ID: "bare", Title: "Supervision without a summary", Content: "Only content."})
	k := actors.KnowledgeFrom(r)
	tests := []struct {
		name   string
		query  string
		limit  int
		wantN  int
		checks func(t *testing.T, ps []actors.Passage)
	}{
		{"limit cuts the results", "supervision", 1, 1, nil},
		{"summary then content", "supervision trees", 0, -1, func(t *testing.T, ps []actors.Passage) {
			p := passage(t, ps, "supervision")
			if want := supervisionPage.Summary + "\n\n" + supervisionPage.Content; p.Text != want || p.Title != supervisionPage.Title || p.Score <= 0 {
				t.Errorf("passage = %+v, want text %q", p, want)
			}
		}},
		{"content only", "supervision without a summary", 0, -1, func(t *testing.T, ps []actors.Passage) {
			if p := passage(t, ps, "bare"); p.Text != "Only content." {
				t.Errorf("text = %q", p.Text)
			}
		}},
		{"long pages are capped", "supervision of long pages", 0, -1, func(t *testing.T, ps []actors.Passage) {
			p := passage(t, ps, "long")
			if len(p.Text) > actors.PassageBytes+100 || !strings.Contains(p.Text, "truncated") {
				t.Errorf("text of %d bytes, want at most about %d with a truncation note", len(p.Text), actors.PassageBytes)
			}
		}},
		{"no match", "bread", 5, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := k.Query(t.Context(), tt.query, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantN >= 0 && len(ps) != tt.wantN {
				t.Fatalf("got %d passages, want %d: %+v", len(ps), tt.wantN, ps)
			}
			if tt.checks != nil {
				tt.checks(t, ps)
			}
		})
	}
}

func passage(t *testing.T, ps []actors.Passage, id string) actors.Passage {
	t.Helper()
	for _, p := range ps {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no passage %q among %+v", id, ps)
	return actors.Passage{}
}
