package knowledge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
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
	// MaxPostings bounds the postings a query reads. Posting lists are read
	// best first (see Retriever), so the postings left unread are those that
	// can lift a page least. Zero means 4096; a negative value reads every
	// posting of the query's keywords.
	MaxPostings int
	// MaxCandidates bounds the candidate pages whose scoring record a query
	// reads, best estimate first (see Retriever). Zero means 250. A negative
	// value reads every posting and scores every page of the candidate union
	// (the exact top results, at a cost that grows with the corpus).
	MaxCandidates int
	// SkipRecall stops Retrieve from recording recalls (access counts and
	// recall statistics); queries then never write.
	SkipRecall bool
}

// Default budgets of a query.
const (
	defaultMaxPostings   = 4096
	defaultMaxCandidates = 250
)

// MaxQueryTerms is the most keywords of a query that are looked up in the
// index; further keywords still count in the score (through the query's
// bigrams) but find no candidates.
const MaxQueryTerms = 64

// boundSlack places the estimate that orders candidates between the lower
// bound of their score (0) and its upper bound (1): see Retriever. It was
// calibrated on a generated corpus with Zipf-distributed words: the true
// score of a candidate is usually well above its lower bound, since
// unrelated words share bigrams. Lower values stop scoring too early, higher
// ones order candidates by field length alone; the benchmarks report the
// share of an exhaustive search's top 20 that the defaults find. At 1 the
// stopping rule is sound for the candidates met.
const boundSlack = 0.6

// Retriever answers keyword queries over a Base with its inverted index. It
// is safe for concurrent use.
//
// The score of a page is
//
//	score = 0.5·Dice(title) + 0.3·Dice(summary) + 0.2·Dice(content)
//
// where Dice compares the character bigrams of the whole query with those of
// the field, both lower-cased (a query typed in another case finds the same
// pages; Dice(x, x) stays 1 and Dice(x, "") 0), and content counts its first
// MaxScoredContent bytes. Pages scoring below MinScore are dropped and the
// rest are ordered by score, then by Updated (newest first), then by id, and
// cut to MaxResults.
//
// Only candidate pages are read: those with a keyword of the query in their
// title, summary, tags or content, according to the inverted index. A query
// is answered in three steps:
//
//  1. Keywords extracts the query's terms (at most MaxQueryTerms).
//  2. Their posting lists are read, the list whose next posting can
//     add most to a page's score first. A posting of term t in a field of n
//     bigrams raises the lower bound of the page's score by up to
//     w·2·|bigrams(t)|/(|Q|+n) (w the field's weight, Q the query's
//     bigrams), and the lists are ordered by n, so reading them best first
//     meets the pages a term lifts most before the others. Each candidate
//     gets a lower bound L of its score (the bigrams of the terms it matched
//     are certainly shared) and an upper bound U (the bigram counts of its
//     fields, kept in the posting, bound each Dice). A title posting also
//     carries the title's bigram set, so a candidate met in a title has the
//     title's share of its score (half of it) exact in both bounds, without
//     a read. Reading stops when every list is read, after MaxPostings
//     postings, or when no page not met yet can reach the lower bound of the
//     current MaxResults-th candidate.
//  3. The candidates are scored exactly from their scoring records (their
//     bigram sets) in decreasing order of L + 0.6·(U − L), until
//     MaxCandidates records are read or no remaining candidate's estimate
//     reaches the score of the current MaxResults-th result (or MinScore).
//     Only the pages returned are then read in full.
//
// The budgets make a query's cost independent of the corpus size; the price
// is that a page matching only frequent keywords in long fields may be left
// out. MaxCandidates < 0 lifts both budgets and the early stops: every
// posting is read and every candidate scored.
//
// The pages returned are recorded as recalls (Base.RecordRecall) unless
// SkipRecall is set. A posting whose page no longer exists is skipped and
// deleted.
type Retriever struct {
	base  *Base
	opts  RetrieverOptions
	slack float64 // boundSlack, or 1 when every candidate is scored
	exact bool    // every posting is read and every candidate scored
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
	if opts.MaxPostings == 0 {
		opts.MaxPostings = defaultMaxPostings
	}
	slack, exact := boundSlack, false
	switch {
	case opts.MaxCandidates == 0:
		opts.MaxCandidates = defaultMaxCandidates
	case opts.MaxCandidates < 0:
		opts.MaxCandidates = math.MaxInt
		opts.MaxPostings = -1
		slack, exact = 1, true
	}
	if opts.MaxPostings < 0 {
		opts.MaxPostings = math.MaxInt
	}
	return &Retriever{base: base, opts: opts, slack: slack, exact: exact}, nil
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
	// Postings is the number of postings read.
	Postings int
	// Candidates is the number of candidate pages scored: the only pages
	// whose records the query read (besides the Items).
	Candidates int
	// Truncated reports that the query stopped before scoring every page of
	// the candidate union: a budget or the score bounds cut it.
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
	if len(res.Keywords) > MaxQueryTerms {
		res.Keywords = res.Keywords[:MaxQueryTerms]
	}
	q := newQueryPlan(normalize(query), res.Keywords)
	var stale []*candidate
	var cs *candidateSet
	r.base.mu.RLock()
	err := r.base.db.View(func(txn *badger.Txn) error {
		var err error
		cs, err = r.collect(ctx, txn, q)
		if err != nil {
			return err
		}
		top, missing, err := r.score(ctx, txn, q, cs)
		if err != nil {
			return err
		}
		res.Postings, res.Candidates, res.Truncated = cs.postings, cs.scored, cs.truncated
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

// score reads the scoring records of the candidates in decreasing order of
// their estimate and returns the best MaxResults at or above MinScore, best
// first, and the candidates whose page is gone.
func (r *Retriever) score(ctx context.Context, txn *badger.Txn, q *queryPlan, cs *candidateSet) ([]scored, []*candidate, error) {
	order := cs.byEstimate(r.slack, r.opts.MinScore)
	var top []scored
	var missing []*candidate
	k := r.opts.MaxResults
	for n := 0; ; n++ {
		c := order.pop()
		if c == nil {
			break
		}
		if n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		// A candidate must reach the threshold to matter: MinScore, or the
		// score of the current last result once there are k of them.
		threshold := r.opts.MinScore
		if len(top) == k {
			threshold = max(threshold, top[k-1].score)
		}
		if cs.scored == r.opts.MaxCandidates || c.estimate < threshold {
			cs.truncated = true
			break
		}
		cs.scored++
		item, err := txn.Get(docKey(c.id))
		if errors.Is(err, badger.ErrKeyNotFound) {
			missing = append(missing, c)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		var s scored
		var keep bool
		err = item.Value(func(v []byte) error {
			d, err := unmarshalDocRecord(v)
			if err != nil {
				return fmt.Errorf("page %q: %w", c.id, err)
			}
			s = scored{id: c.id, updated: d.updated}
			s.score, keep = scoreDoc(q.bigrams, &d, threshold)
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
func scoreDoc(q []bigram, d *docRecord, threshold float64) (float64, bool) {
	nq := len(q)
	var bound [3]float64
	for i := range bound {
		bound[i] = fieldWeights[i] * diceBound(nq, d.bigrams[i])
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
		score += fieldWeights[i] * dice(q, d.sets[i], d.bigrams[i])
	}
	return score, score >= threshold
}

// dropPostings deletes the postings of terms that point at the stale
// candidates, for those of them whose page still does not exist.
func (b *Base) dropPostings(stale []*candidate, terms []string) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.update(func(txn *badger.Txn) error {
		for _, c := range stale {
			_, err := txn.Get(pageKey(c.id))
			if err == nil {
				continue
			}
			if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			for fi, f := range queryFields {
				rank := postingRank(f, c.counts)
				for t, term := range terms {
					if c.matched[fi]&(1<<t) == 0 {
						continue
					}
					if err := txn.Delete(postingKey(term, f, rank, c.id)); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}
