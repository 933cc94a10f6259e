// Package knowledge stores knowledge pages in the runtime's Badger database
// and retrieves them by keyword, without embeddings.
//
//	st, _ := memory.Open(memory.Options{Dir: dir})
//	kb, _ := knowledge.New(st, knowledge.Options{})
//	kb.Create(ctx, knowledge.Page{ID: "actors", Title: "Supervision trees", Content: "..."})
//	r, _ := knowledge.NewRetriever(kb, knowledge.RetrieverOptions{})
//	res, _ := r.Retrieve(ctx, "how are actors supervised?")
//	for _, it := range res.Items {
//		fmt.Println(it.Score, it.Page.Title)
//	}
//
// # Pages and indexes
//
// A Base keeps each page as JSON under memory.PrefixKnowledge together with
// what is derived from it: a scoring record (the bigram sets of its scored
// fields), a creation-order key, one key per tag and one posting per (term,
// field) in an inverted index. A page write updates all of them in one Badger
// transaction, replacing the postings of the old version; Import loads many
// pages through one write batch; Rebuild recomputes the derived keys from the
// pages, and VerifyIndex checks them against the pages without writing.
//
// # Retrieval
//
// Keywords tokenizes both pages and queries (English stop words removed, CJK
// text as character bigrams). A query reads only the postings of its keywords
// and scores only those candidates, by the Dice coefficient of character
// bigrams, weighted 0.5 title, 0.3 summary and 0.2 content, keeping pages
// scoring at least 0.1, best 20 first (ties by recency). Postings are ordered
// so that a query reads those that can lift a page most first, and bounds
// on each candidate's score decide which candidates are scored, within
// budgets that keep a query's cost flat as the base grows. See Retriever.
//
// # Eviction
//
// A Policy bounds the pages kept: by age (Badger's own TTL), by count (the
// newest N) or by recall value (how often and how well a page was retrieved,
// and how recently). Knowledge accumulates by default.
package knowledge
