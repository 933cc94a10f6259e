package knowledge

import (
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/dgraph-io/badger/v4"
)

// queryPlan is what a query compares pages with: the bigrams of the whole
// query and, for each keyword, which of those bigrams it covers (a page
// matching the keyword in a field certainly shares them).
type queryPlan struct {
	bigrams  []bigram   // distinct bigrams of the normalised query, sorted
	terms    []string   // keywords looked up, at most MaxQueryTerms
	words    int        // uint64 words of a bitset over bigrams
	termBits [][]uint64 // per term: the query bigrams it covers
	termSize []int      // per term: how many
}

func newQueryPlan(normalized string, terms []string) *queryPlan {
	q := &queryPlan{bigrams: bigramSet(normalized), terms: terms}
	q.words = (len(q.bigrams) + 63) / 64
	q.termBits = make([][]uint64, len(terms))
	q.termSize = make([]int, len(terms))
	for t, term := range terms {
		set := make([]uint64, q.words)
		for _, g := range bigramSet(term) {
			if i, ok := slices.BinarySearch(q.bigrams, g); ok && set[i/64]&(1<<(i%64)) == 0 {
				set[i/64] |= 1 << (i % 64)
				q.termSize[t]++
			}
		}
		q.termBits[t] = set
	}
	return q
}

// candidate is a page met in the postings of a query.
type candidate struct {
	id      string
	counts  [3]int    // bigram counts of its scored fields, from the posting
	matched [4]uint64 // per field of queryFields: bit t set when term t matched
	cover   int       // offset of its three bitsets of covered query bigrams
	heapPos int       // position in candidateSet.heap, -1 when not in it

	lower      float64 // lower bound of the score
	titleLower float64 // the title's share of lower, until the title is known
	title      float64 // WeightTitle·Dice(title), exact, when titleKnown
	titleKnown bool    // a title posting gave the title's bigram set
	estimate   float64 // ordering key of the scoring step
}

// candidateSet accumulates the candidates of a query and keeps the k with
// the highest lower bounds in a min-heap.
type candidateSet struct {
	q     *queryPlan
	cands []candidate
	index map[string]int
	cover []uint64
	heap  []int // indexes into cands, min-heap by lower
	k     int

	postings  int  // postings read
	scored    int  // scoring records read
	truncated bool // the candidate union was not scored in full
}

// postingList is a cursor over the postings of one term in one field.
type postingList struct {
	term   int
	field  int // index in queryFields
	scored int // index in docRecord order, -1 for tags
	prefix []byte
	it     *badger.Iterator
	gain   float64 // w·2·|bigrams(term)|; the head adds at most gain/(|Q|+rank)
	head   float64 // bound of what the next posting adds; valid when ok
	ok     bool
}

// postingChunk is how many postings are read from a list before the lists
// are compared again.
const postingChunk = 32

// seek positions the list on its next well-formed posting and computes its
// head bound.
func (l *postingList) seek(nq int) {
	for ; l.it.Valid(); l.it.Next() {
		key := l.it.Item().Key()
		if len(key) <= len(l.prefix)+2 {
			continue // not a posting of this layout
		}
		rank := binary.BigEndian.Uint16(key[len(l.prefix):])
		l.head = l.gain / float64(nq+int(rank))
		l.ok = true
		return
	}
	l.ok = false
}

// collect reads the postings of the query's terms, best list first, and
// returns the candidates met.
func (r *Retriever) collect(ctx context.Context, txn *badger.Txn, q *queryPlan) (*candidateSet, error) {
	cs := &candidateSet{q: q, index: make(map[string]int), k: r.opts.MaxResults}
	nq := len(q.bigrams)
	lists := make([]*postingList, 0, len(queryFields)*len(q.terms))
	defer func() {
		for _, l := range lists {
			l.it.Close()
		}
	}()
	for fi, f := range queryFields {
		si := scoredFieldIndex(f)
		for t, term := range q.terms {
			l := &postingList{term: t, field: fi, scored: si, prefix: postingPrefix(term, f)}
			if si >= 0 {
				l.gain = fieldWeights[si] * 2 * float64(q.termSize[t])
			}
			l.it = txn.NewIterator(badger.IteratorOptions{Prefix: l.prefix})
			lists = append(lists, l)
			l.it.Rewind()
			l.seek(nq)
		}
	}
	for {
		var best *postingList
		sum := 0.0
		for _, l := range lists {
			if !l.ok {
				continue
			}
			sum += l.head
			if best == nil || l.head > best.head {
				best = l
			}
		}
		if best == nil {
			return cs, nil
		}
		// An unseen page gains at most sum from the lists; it cannot enter
		// the k best lower bounds.
		if cs.postings >= r.opts.MaxPostings || (!r.exact && len(cs.heap) == cs.k && sum < cs.cands[cs.heap[0]].lower) {
			cs.truncated = true
			return cs, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for n := 0; n < postingChunk && best.ok && cs.postings < r.opts.MaxPostings; n++ {
			if err := cs.read(best); err != nil {
				return nil, err
			}
			best.it.Next()
			best.seek(nq)
		}
	}
}

// read records the posting under the list's cursor.
func (cs *candidateSet) read(l *postingList) error {
	cs.postings++
	item := l.it.Item()
	id := item.Key()[len(l.prefix)+2:]
	idx, ok := cs.index[string(id)]
	if ok && (l.scored != 0 || cs.cands[idx].titleKnown) {
		cs.match(idx, l)
		return nil
	}
	var counts [3]int
	var title []byte
	var valid bool
	err := item.Value(func(v []byte) error {
		counts, title, valid = parsePostingValue(v)
		if valid && l.scored == 0 && len(title) > 0 {
			// The title posting carries the title's bigram set: the title's
			// share of the score is known exactly.
			if !ok {
				idx, ok = cs.add(string(id), counts), true
			}
			cs.knowTitle(idx, dice(cs.q.bigrams, title, counts[0]))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !valid {
		return nil // a malformed posting; Rebuild rewrites it
	}
	if !ok {
		idx = cs.add(string(id), counts)
	}
	cs.match(idx, l)
	return nil
}

// knowTitle sets the exact title share of candidate idx's score, replacing
// the title's share of its lower bound (which it cannot be below).
func (cs *candidateSet) knowTitle(idx int, dice float64) {
	c := &cs.cands[idx]
	c.title = fieldWeights[0] * dice
	c.titleKnown = true
	c.lower += max(c.title-c.titleLower, 0)
	c.titleLower = 0
	cs.raise(idx)
}

// add appends a new candidate and returns its index.
func (cs *candidateSet) add(id string, counts [3]int) int {
	idx := len(cs.cands)
	cs.cands = append(cs.cands, candidate{id: id, counts: counts, cover: len(cs.cover), heapPos: -1})
	cs.cover = append(cs.cover, make([]uint64, 3*cs.q.words)...)
	cs.index[id] = idx
	return idx
}

// match records that candidate idx has the list's term in the list's field,
// raising its lower bound by the query bigrams the term newly covers there.
func (cs *candidateSet) match(idx int, l *postingList) {
	c := &cs.cands[idx]
	bit := uint64(1) << l.term
	if c.matched[l.field]&bit != 0 {
		return
	}
	c.matched[l.field] |= bit
	if l.scored < 0 {
		return
	}
	w := cs.q.words
	cover := cs.cover[c.cover+l.scored*w : c.cover+(l.scored+1)*w]
	added := 0
	for i, tb := range cs.q.termBits[l.term] {
		nb := tb &^ cover[i]
		added += bits.OnesCount64(nb)
		cover[i] |= nb
	}
	if added == 0 || (l.scored == 0 && c.titleKnown) {
		return
	}
	gain := fieldWeights[l.scored] * 2 * float64(added) / float64(len(cs.q.bigrams)+c.counts[l.scored])
	if l.scored == 0 {
		c.titleLower += gain
	}
	c.lower += gain
	cs.raise(idx)
}

// raise restores the heap after the lower bound of candidate idx grew.
func (cs *candidateSet) raise(idx int) {
	c := &cs.cands[idx]
	switch {
	case c.heapPos >= 0:
		cs.down(c.heapPos)
	case len(cs.heap) < cs.k:
		c.heapPos = len(cs.heap)
		cs.heap = append(cs.heap, idx)
		cs.up(c.heapPos)
	case c.lower > cs.cands[cs.heap[0]].lower:
		cs.cands[cs.heap[0]].heapPos = -1
		cs.heap[0] = idx
		c.heapPos = 0
		cs.down(0)
	}
}

func (cs *candidateSet) less(i, j int) bool {
	return cs.cands[cs.heap[i]].lower < cs.cands[cs.heap[j]].lower
}

func (cs *candidateSet) swap(i, j int) {
	cs.heap[i], cs.heap[j] = cs.heap[j], cs.heap[i]
	cs.cands[cs.heap[i]].heapPos = i
	cs.cands[cs.heap[j]].heapPos = j
}

func (cs *candidateSet) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !cs.less(i, p) {
			return
		}
		cs.swap(i, p)
		i = p
	}
}

func (cs *candidateSet) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(cs.heap) {
			return
		}
		m := l
		if r := l + 1; r < len(cs.heap) && cs.less(r, l) {
			m = r
		}
		if !cs.less(m, i) {
			return
		}
		cs.swap(i, m)
		i = m
	}
}

// byEstimate returns the candidates that may reach minScore, as a queue
// that yields them in the order they are scored: decreasing estimate
// lower + slack·(upper − lower), where upper bounds each field's Dice by the
// bigram counts alone (the title's is exact when a title posting gave it),
// then by id. The candidates left out cannot be scored: their estimate is
// below minScore, so the scoring step would stop before them.
func (cs *candidateSet) byEstimate(slack, minScore float64) *estimateQueue {
	nq := len(cs.q.bigrams)
	out := make([]*candidate, 0, len(cs.cands))
	for i := range cs.cands {
		c := &cs.cands[i]
		upper := 0.0
		for f, n := range c.counts {
			if f == 0 && c.titleKnown {
				upper += c.title
				continue
			}
			upper += fieldWeights[f] * diceBound(nq, n)
		}
		c.estimate = c.lower + slack*math.Max(upper-c.lower, 0)
		if c.estimate >= minScore {
			out = append(out, c)
		}
	}
	if len(out) < len(cs.cands) {
		cs.truncated = true
	}
	q := &estimateQueue{heap: out}
	for i := len(out)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
	return q
}

// estimateQueue is a max-heap of candidates by estimate (then id): the
// scoring step pops the few it scores instead of sorting them all.
type estimateQueue struct {
	heap []*candidate
}

// pop removes and returns the next candidate, or nil when none is left.
func (q *estimateQueue) pop() *candidate {
	if len(q.heap) == 0 {
		return nil
	}
	top := q.heap[0]
	last := len(q.heap) - 1
	q.heap[0] = q.heap[last]
	q.heap = q.heap[:last]
	q.down(0)
	return top
}

// before orders the queue: higher estimate first, then lower id.
func (q *estimateQueue) before(i, j int) bool {
	a, b := q.heap[i], q.heap[j]
	return cmp.Or(cmp.Compare(b.estimate, a.estimate), cmp.Compare(a.id, b.id)) < 0
}

func (q *estimateQueue) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(q.heap) {
			return
		}
		m := l
		if r := l + 1; r < len(q.heap) && q.before(r, l) {
			m = r
		}
		if !q.before(m, i) {
			return
		}
		q.heap[i], q.heap[m] = q.heap[m], q.heap[i]
		i = m
	}
}
