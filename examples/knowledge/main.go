// Command knowledge gives an agent a knowledge base to answer from.
//
// Knowledge pages live in the runtime's Badger store, indexed by keyword
// as they are written (no embeddings, no external service). The program
// writes a few pages of a shop's help centre, queries the retriever
// directly to show the scores, then runs a session whose agent profile
// enables retrieval: the passages that best match the user's message are
// layered into the system prompt, and the agent can search further with
// the retrieve tool, which a scripted model calls here.
//
// Run it with:
//
//	go run ./examples/knowledge
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/knowledge"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "knowledge:", err)
		os.Exit(1)
	}
}

// pages are the help centre's articles.
var pages = []knowledge.Page{
	{ID: "returns", Title: "Returns and refunds", Summary: "Items can be returned within 30 days for a full refund.",
		Content: "Send the item back unused in its original packaging. The refund reaches your card within 5 business days of our receiving it.",
		Tags:    []string{"orders"}},
	{ID: "shipping", Title: "Shipping times", Summary: "Orders ship within 24 hours and arrive in 2 to 4 days.",
		Content: "Express shipping arrives the next business day when ordered before 2 pm.", Tags: []string{"orders"}},
	{ID: "warranty", Title: "Warranty", Summary: "Every product has a two-year warranty.",
		Content: "The warranty covers manufacturing defects, not wear or accidental damage."},
	{ID: "hours", Title: "Opening hours of the support team", Summary: "Support answers Monday to Friday, 9 am to 6 pm.",
		Content: "Outside those hours, write to us and we answer the next business day."},
}

func run(ctx context.Context, out io.Writer) (err error) {
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()

	// 1. Write the pages; each write updates the inverted index with it.
	kb, err := knowledge.New(store, knowledge.Options{})
	if err != nil {
		return err
	}
	for _, p := range pages {
		if _, err := kb.Create(ctx, p); err != nil {
			return err
		}
	}
	r, err := knowledge.NewRetriever(kb, knowledge.RetrieverOptions{MaxResults: 3})
	if err != nil {
		return err
	}

	// 2. Query the retriever directly.
	fmt.Fprintf(out, "== %d pages written; querying the index\n", len(pages))
	for _, q := range []string{"how long does shipping take?", "can I get a refund?"} {
		res, err := r.Retrieve(ctx, q)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%q (keywords %s)\n", q, strings.Join(res.Keywords, ", "))
		for _, it := range res.Items {
			fmt.Fprintf(out, "  %.2f  %s\n", it.Score, it.Page.Title)
		}
	}

	// 3. An agent that answers from the knowledge base. Its first model
	// call sees the best passages in its system prompt (captured by the
	// hook); it calls retrieve to search for more, then answers.
	model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			ToolCalls: []scripted.ToolCall{{Name: "retrieve", Arguments: `{"query":"refund card business days","limit":2}`}},
		}},
		{Match: scripted.Match{Tool: "retrieve"}, Reply: scripted.Reply{
			Text: "You can return the blender within 30 days, unused and in its packaging; " +
				"the refund reaches your card within 5 business days after it arrives.",
		}},
	}}, scripted.Options{})
	if err != nil {
		return err
	}
	var prompt systemPrompt
	cfg := actors.Config{
		Store:      store,
		Durability: memory.DurabilityNone,
		Provider:   model,
		Knowledge:  actors.KnowledgeFrom(r), // feeds the prompt layer and the retrieve tool
		Agents: []actors.AgentProfile{{
			Name:     "support",
			Prompt:   "You answer customers from the help centre's knowledge.",
			Retrieve: true,
		}},
	}
	cfg.Hooks.Register(actors.PreRequest, actors.HookFunc(prompt.capture))
	rt, err := actors.New(cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Shutdown(context.WithoutCancel(ctx))) }()
	sess, err := rt.Open(ctx, "customer-7")
	if err != nil {
		return err
	}
	const question = "How do returns and refunds work? I want to send back a blender."
	fmt.Fprintf(out, "\n== a session with retrieval\nuser:      %s\n", question)
	for ev, err := range sess.Stream(ctx, messages.UserText(question)) {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case messages.ToolStarted:
			fmt.Fprintf(out, "call:      %s %s\n", e.Name, e.Arguments)
		case messages.ToolFinished:
			fmt.Fprintf(out, "result:\n%s\n", indent(e.Content))
		case messages.TurnEnded:
			fmt.Fprintf(out, "assistant: %s\n", e.Text)
		}
	}
	fmt.Fprintf(out, "\n== the knowledge layer of the first system prompt\n%s\n", indent(prompt.knowledgeLayer()))
	return nil
}

// systemPrompt keeps the system prompt of the first model call.
type systemPrompt struct {
	mu    sync.Mutex
	first string
}

func (s *systemPrompt) capture(_ context.Context, hc *actors.HookContext) actors.HookResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == "" && len(hc.Request.Messages) > 0 && hc.Request.Messages[0].Role == messages.RoleSystem {
		s.first = hc.Request.Messages[0].Text()
	}
	return actors.HookResult{}
}

// knowledgeLayer returns the <knowledge> block of the prompt.
func (s *systemPrompt) knowledgeLayer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := strings.Index(s.first, "<knowledge>")
	if start < 0 {
		return "(none)"
	}
	return s.first[start:]
}

// indent indents the non-empty lines of s by two spaces.
func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n")
}
