package actors

// This file holds KnowledgeFrom, which serves Config.Knowledge from a
// memory/knowledge base.

import (
	"context"
	"fmt"
	"strings"

	"github.com/agcore/agcore/memory/knowledge"
	"github.com/agcore/agcore/toolsys"
)

// PassageBytes caps the text of one passage KnowledgeFrom returns, so that
// a long page cannot crowd the prompt's knowledge layer or a retrieve
// result; the cut text ends with a note of the page's full size.
const PassageBytes = 2000

// KnowledgeFrom adapts a knowledge-base retriever to Config.Knowledge, so
// that the pages of a knowledge.Base feed the retrieved-knowledge layer of
// the prompt and the retrieve tool. A page becomes a passage with its id,
// title and score; its text is the page's summary and content, capped at
// PassageBytes. The retriever's own options (MaxResults, MinScore, recall
// recording) apply; Query returns at most limit of its results.
func KnowledgeFrom(r *knowledge.Retriever) Knowledge { return retrieverKnowledge{r: r} }

type retrieverKnowledge struct{ r *knowledge.Retriever }

// Query implements Knowledge.
func (k retrieverKnowledge) Query(ctx context.Context, query string, limit int) ([]Passage, error) {
	res, err := k.r.Retrieve(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("actors: knowledge: %w", err)
	}
	items := res.Items
	if limit > 0 && len(items) > limit {
		items = items[:limit]
	}
	out := make([]Passage, 0, len(items))
	for _, it := range items {
		out = append(out, Passage{ID: it.Page.ID, Title: it.Page.Title, Text: passageText(it.Page), Score: it.Score})
	}
	return out, nil
}

// passageText is a page's summary and content, capped at PassageBytes.
func passageText(p knowledge.Page) string {
	parts := make([]string, 0, 2)
	for _, s := range []string{p.Summary, p.Content} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return toolsys.CapOutput(strings.Join(parts, "\n\n"), PassageBytes)
}
