package knowledge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// RetrieverOptions configures a Retriever. The zero value gives the defaults.
type RetrieverOptions struct {
	// MaxResults is the most pages a query returns. Zero means 20.
	MaxResults int
	// MinScore drops pages scoring below it. Zero means 0.1; a negative
	// value keeps every candidate.
	MinScore float64
	// MaxCandidates bounds the candidate pages a query scores. Postings are
	// read field by field (every keyword's title matches, then summary, tag
	// and content matches), taking the keywords in turn, so the candidates
	// kept are those matching in the most important fields. Zero means 500;
	// a negative value scores the whole union of the keywords' postings.
	MaxCandidates int
	// SkipRecall stops Retrieve from recording recalls (access counts and
	// recall statistics); queries then never write.
	SkipRecall bool
}

// Retriever answers keyword queries over a Base with its inverted index. It
// is safe for concurrent use.
//
// A query is answered in four steps:
//
//  1. Keywords extracts the query's terms;
//  2. the postings of those terms give the candidate pages (no other page is
//     read; see RetrieverOptions.MaxCandidates);
//  3. each candidate is scored from its scoring record:
//     score = 0.5·Dice(title) + 0.3·Dice(summary) + 0.2·Dice(content),
//     where Dice compares the character bigrams of the whole query with those
//     of the field, both lower-cased (a query typed in another case finds the
//     same pages; Dice(x, x) stays 1 and Dice(x, "") 0), and content counts
//     its first MaxScoredContent bytes;
//  4. pages scoring below MinScore are dropped and the rest are ordered by
//     score, then by Updated (newest first), then by id, and cut to
//     MaxResults.
//
// The pages returned are recorded as recalls (Base.RecordRecall) unless
// SkipRecall is set. A posting whose page no longer exists is skipped and
// deleted.
type Retriever struct {
	base *Base
	opts RetrieverOptions
}

// NewRetriever returns a Retriever over base.
func NewRetriever(base *Base, opts RetrieverOptions) (*Retriever, error) {
	if base == nil {
		return nil, &InvalidError{Field: "base", Value: "<nil>", Reason: "a Base is required"}
	}
	if opts.MaxResults < 0 {
		return nil, &InvalidError{Field: "MaxResults", Value: fmt.Sprint(opts.MaxResults), Reason: "negative"}
	}
	if opts.MaxResults == 0 {
		opts.MaxResults = 20
	}
	switch {
	case opts.MinScore == 0:
		opts.MinScore = 0.1
	case opts.MinScore < 0:
		opts.MinScore = 0
	}
	switch {
	case opts.MaxCandidates == 0:
		opts.MaxCandidates = 500
	case opts.MaxCandidates < 0:
		opts.MaxCandidates = int(^uint(0) >> 1)
	}
	return &Retriever{base: base, opts: opts}, nil
}

// ScoredPage is a page and its retrieval score.
type ScoredPage struct {
	// Page is the page, with its AccessCount after this recall.
	Page Page
	// Score is in [0, 1].
	Score float64
}

// Result is the answer to a query.
type Result struct {
	// Query is the query as given.
	Query string
	// Keywords are the terms looked up in the index.
	Keywords []string
	// Items are the pages found, best first.
	Items []ScoredPage
	// Candidates is the number of candidate pages scored: the only pages
	// the query read.
	Candidates int
	// Truncated reports that MaxCandidates cut the candidate set.
	Truncated bool
}

// scored is a candidate that passed MinScore.
type scored struct {
	id      string
	score   float64
	updated time.Time
}

// better orders results: score descending, then Updated descending, then id.
func better(a, b scored) int {
	return cmp.Or(cmp.Compare(b.score, a.score), b.updated.Compare(a.updated), cmp.Compare(a.id, b.id))
}

// Retrieve answers query. An empty query (or one without keywords) returns
// an empty Result.
func (r *Retriever) Retrieve(ctx context.Context, query string) (Result, error) {
	res := Result{Query: query}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if strings.TrimSpace(query) == "" {
		return res, nil
	}
	res.Keywords = Keywords(query)
	if len(res.Keywords) == 0 {
		return res, nil
	}
	q := bigramStrings(normalize(query))
	var stale []string
	r.base.mu.RLock()
	err := r.base.db.View(func(txn *badger.Txn) error {
		cands, truncated, err := r.candidates(ctx, txn, res.Keywords)
		if err != nil {
			return err
		}
		res.Truncated = truncated
		res.Candidates = len(cands)
		top, missing, err := r.score(ctx, txn, q, cands)
		if err != nil {
			return err
		}
		stale = missing
		for _, s := range top {
			p, err := readPage(txn, s.id)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			res.Items = append(res.Items, ScoredPage{Page: p, Score: s.score})
		}
		return nil
	})
	r.base.mu.RUnlock()
	if err != nil {
		return Result{Query: query}, fmt.Errorf("knowledge: retrieve %q: %w", query, err)
	}
	if len(stale) > 0 {
		if err := r.base.dropPostings(stale, res.Keywords); err != nil {
			return res, fmt.Errorf("knowledge: retrieve %q: %w", query, err)
		}
	}
	if !r.opts.SkipRecall && len(res.Items) > 0 {
		recalls := make([]Recall, len(res.Items))
		for i, it := range res.Items {
			recalls[i] = Recall{ID: it.Page.ID, Score: it.Score}
		}
		counts, err := r.base.RecordRecall(ctx, recalls...)
		if err != nil {
			return res, fmt.Errorf("knowledge: retrieve %q: %w", query, err)
		}
		for i := range res.Items {
			if n, ok := counts[res.Items[i].Page.ID]; ok {
				res.Items[i].Page.AccessCount = n
			}
		}
	}
	return res, nil
}

// candidates reads the postings of terms, field by field and term by term in
// turn, and returns the distinct page ids in the order met.
func (r *Retriever) candidates(ctx context.Context, txn *badger.Txn, terms []string) ([]string, bool, error) {
	seen := make(map[string]struct{})
	var ids []string
	its := make([]*badger.Iterator, len(terms))
	prefixes := make([][]byte, len(terms))
	defer func() {
		for _, it := range its {
			if it != nil {
				it.Close()
			}
		}
	}()
	for _, field := range queryFields {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		active := 0
		for i, term := range terms {
			prefixes[i] = postingPrefix(term, field)
			its[i] = txn.NewIterator(badger.IteratorOptions{Prefix: prefixes[i]})
			its[i].Rewind()
			active++
		}
		for active > 0 {
			for i, it := range its {
				if it == nil {
					continue
				}
				if !it.Valid() {
					it.Close()
					its[i] = nil
					active--
					continue
				}
				key := it.Item().Key()
				id := key[len(prefixes[i]):]
				if _, ok := seen[string(id)]; !ok {
					if len(ids) == r.opts.MaxCandidates {
						return ids, true, nil
					}
					s := string(id)
					seen[s] = struct{}{}
					ids = append(ids, s)
				}
				it.Next()
			}
		}
	}
	return ids, false, nil
}

// score scores the candidates and returns the best MaxResults at or above
// MinScore, best first, and the candidates whose page is gone.
func (r *Retriever) score(ctx context.Context, txn *badger.Txn, q [][]byte, ids []string) ([]scored, []string, error) {
	var top []scored
	var missing []string
	k := r.opts.MaxResults
	nq := len(q)
	for i, id := range ids {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		item, err := txn.Get(docKey(id))
		if errors.Is(err, badger.ErrKeyNotFound) {
			missing = append(missing, id)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		// A candidate must reach the threshold to matter: MinScore, or the
		// score of the current last result once there are k of them.
		threshold := r.opts.MinScore
		if len(top) == k {
			threshold = max(threshold, top[k-1].score)
		}
		var s scored
		var keep bool
		err = item.Value(func(v []byte) error {
			d, err := unmarshalDocRecord(v)
			if err != nil {
				return fmt.Errorf("page %q: %w", id, err)
			}
			s = scored{id: id, updated: d.updated}
			s.score, keep = scoreDoc(q, nq, &d, threshold)
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if !keep {
			continue
		}
		pos, _ := slices.BinarySearchFunc(top, s, better)
		if pos >= k {
			continue
		}
		top = slices.Insert(top, pos, s)
		if len(top) > k {
			top = top[:k]
		}
	}
	return top, missing, nil
}

// scoreDoc computes the score of a scoring record, or reports that it cannot
// reach threshold (comparing upper bounds first, so that the content of a
// page that cannot rank is never scanned).
func scoreDoc(q [][]byte, nq int, d *docRecord, threshold float64) (float64, bool) {
	weights := [3]float64{WeightTitle, WeightSummary, WeightContent}
	var bound [3]float64
	for i := range bound {
		bound[i] = weights[i] * diceBound(nq, d.bigrams[i])
	}
	score := 0.0
	for i := range bound {
		rest := 0.0
		for _, b := range bound[i:] {
			rest += b
		}
		if score+rest < threshold {
			return 0, false
		}
		score += weights[i] * dice(q, d.text[i], d.bigrams[i])
	}
	return score, score >= threshold
}

// dropPostings deletes the postings of terms that point at the pages ids,
// for those of them that still do not exist.
func (b *Base) dropPostings(ids, terms []string) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.update(func(txn *badger.Txn) error {
		for _, id := range ids {
			_, err := txn.Get(pageKey(id))
			if err == nil {
				continue
			}
			if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			for _, term := range terms {
				for _, f := range queryFields {
					if err := txn.Delete(postingKey(term, f, id)); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}
