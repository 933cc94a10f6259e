package knowledge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/memory"
)

// corpusWords are the most frequent words of the generated corpus; rarer
// words are built from syllables. Frequencies follow Zipf's law, as in
// natural text.
var corpusWords = strings.Fields(`
system memory agent model data process service request user message tool session
network server client cache index query page file stream event error result state
actor graph node edge storage journal snapshot record table key value config option
policy budget token context prompt window summary content title retrieval search
keyword score rank vector embedding store engine runtime thread worker queue channel
timeout retry backoff supervisor restart crash recovery durability sync batch commit
compaction eviction capacity ttl latency throughput benchmark metric trace log level
schema field type interface method function parameter argument return module package
library framework protocol transport socket http json yaml markdown document wiki
knowledge concept entity relation tag reference version release build test fuzz
deploy cluster replica leader follower consensus raft paxos shard partition region
security permission secret sandbox workspace path directory command shell process
python golang rust typescript compiler parser lexer grammar syntax semantic analysis`)

// corpus generates pages and queries deterministically.
type corpus struct {
	vocab []string
	seed  uint64
}

func newCorpus(size int, seed uint64) *corpus {
	c := &corpus{seed: seed, vocab: slices.Clone(corpusWords)}
	syll := strings.Fields("ka ri to mo ne sa lu vi de po an el or is un ber tan gor lim quo zen fra ste")
	r := rand.New(rand.NewPCG(seed, 0))
	seen := map[string]bool{}
	for _, w := range c.vocab {
		seen[w] = true
	}
	for len(c.vocab) < size {
		var sb strings.Builder
		for range 2 + r.IntN(3) {
			sb.WriteString(syll[r.IntN(len(syll))])
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			c.vocab = append(c.vocab, w)
		}
	}
	return c
}

func (c *corpus) words(r *rand.Rand, z *rand.Zipf, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = c.vocab[z.Uint64()]
	}
	return strings.Join(ws, " ")
}

// page generates page i: a 3-7 word title, a 10-25 word summary, 50-150
// words of content and 1-3 tags.
func (c *corpus) page(i int, created time.Time) Page {
	r := rand.New(rand.NewPCG(c.seed, uint64(i)+1))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(c.vocab)-1))
	tags := make([]string, 1+r.IntN(3))
	for j := range tags {
		tags[j] = c.vocab[r.IntN(len(corpusWords))]
	}
	return Page{
		ID:      fmt.Sprintf("p%06d", i),
		Title:   c.words(r, z, 3+r.IntN(5)),
		Summary: c.words(r, z, 10+r.IntN(16)) + ".",
		Content: c.words(r, z, 50+r.IntN(101)) + ".",
		Tags:    tags,
		Created: created, Updated: created,
	}
}

// query generates a query about one of the n pages: two or three words of
// its title, sometimes with a frequent word added.
func (c *corpus) query(i, n int) string {
	r := rand.New(rand.NewPCG(c.seed^0x9e3779b97f4a7c15, uint64(i)))
	p := c.page(r.IntN(n), time.Time{})
	words := strings.Fields(p.Title)
	k := min(len(words), 2+r.IntN(2))
	q := strings.Join(words[:k], " ")
	if r.IntN(3) == 0 {
		q += " " + corpusWords[r.IntN(len(corpusWords))]
	}
	return q
}

// buildCorpus imports n pages into a new on-disk store, closes it (flushing
// the memtables) and reopens it. It returns the store, the time to import and
// close, and the number of postings written.
func buildCorpus(b *testing.B, dir string, c *corpus, n int, opts memory.Options) (*memory.Store, time.Duration, int) {
	b.Helper()
	ctx := context.Background()
	opts.Dir = dir
	st, err := memory.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	clock := newFakeClock(time.Second)
	kb, err := New(st, Options{Clock: clock.Now})
	if err != nil {
		b.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rep, err := kb.Import(ctx, func(yield func(Page) bool) {
		for i := range n {
			if !yield(c.page(i, base.Add(time.Duration(i)*time.Second))) {
				return
			}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	if st, err = memory.Open(opts); err != nil {
		b.Fatal(err)
	}
	return st, elapsed, rep.Postings
}

// BenchmarkRetrieve measures queries over 100,000 generated pages on disk
// and reports the median and 99th percentile latency, the database size, the
// build time and how many of the top 20 agree with an exhaustive search.
// Building the corpus takes a while; it only happens under -bench. Each
// sub-benchmark times one query per iteration, so run it with a count of
// queries: go test -run X -bench Retrieve -benchtime 1000x.
//
// The queries run twice over the same store. The "fresh" runs start right
// after the import, while Badger is still compacting the tables it wrote
// (queries compete with the compaction for the two cores and read more
// tables). The "settled" runs follow db.Flatten, which compacts every table
// into one level, as a long-running store's background compaction
// eventually does; "settle-s" is the time it took. Both are reported.
func BenchmarkRetrieve(b *testing.B) { benchmarkRetrieve(b, 100_000, 50) }

// BenchmarkRetrieve10k is BenchmarkRetrieve over 10,000 pages, for quick
// runs.
func BenchmarkRetrieve10k(b *testing.B) { benchmarkRetrieve(b, 10_000, 200) }

func benchmarkRetrieve(b *testing.B, n, overlapQueries int) {
	c := newCorpus(20_000, 42)
	st, build, postings := buildCorpus(b, b.TempDir(), c, n, memory.Options{MemTableSize: 64 << 20, BlockCacheSize: 256 << 20})
	defer st.Close()
	kb, err := New(st, Options{})
	if err != nil {
		b.Fatal(err)
	}
	queries := make([]string, 1000)
	for i := range queries {
		queries[i] = c.query(i, n)
	}
	overlap := topOverlap(b, kb, RetrieverOptions{}, queries[:overlapQueries])
	report := func(b *testing.B) {
		lsm, vlog := st.DB().Size()
		b.ReportMetric(float64(lsm+vlog)/(1<<20), "index-MiB")
		b.ReportMetric(build.Seconds(), "build-s")
		b.ReportMetric(float64(postings)/float64(n), "postings/page")
		b.ReportMetric(overlap, "top20-overlap")
	}
	b.Run("fresh", func(b *testing.B) { timeQueries(b, kb, queries, report) })
	start := time.Now()
	if err := st.DB().Flatten(2); err != nil {
		b.Fatal(err)
	}
	settle := time.Since(start)
	b.Run("settled", func(b *testing.B) {
		timeQueries(b, kb, queries, func(b *testing.B) {
			report(b)
			b.ReportMetric(settle.Seconds(), "settle-s")
		})
	})
}

// timeQueries runs the queries with and without recall recording, one
// query per iteration, and reports their latency percentiles and budgets,
// then calls report.
func timeQueries(b *testing.B, kb *Base, queries []string, report func(*testing.B)) {
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		skip bool
	}{{"recall", false}, {"readonly", true}} {
		b.Run(mode.name, func(b *testing.B) {
			r, err := NewRetriever(kb, RetrieverOptions{SkipRecall: mode.skip})
			if err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			cands, hits, read := 0, 0, 0
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				res, err := r.Retrieve(ctx, queries[i%len(queries)])
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				cands += res.Candidates
				hits += len(res.Items)
				read += res.Postings
			}
			slices.Sort(lat)
			ms := func(q float64) float64 {
				return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) / float64(time.Millisecond)
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
			b.ReportMetric(float64(cands)/float64(len(lat)), "candidates/op")
			b.ReportMetric(float64(read)/float64(len(lat)), "postings/op")
			b.ReportMetric(float64(hits)/float64(len(lat)), "results/op")
			report(b)
		})
	}
}

// topOverlap is the mean fraction of the exhaustive top results (every
// candidate scored) that a retriever with opts also returns, over queries.
func topOverlap(tb testing.TB, kb *Base, opts RetrieverOptions, queries []string) float64 {
	tb.Helper()
	ctx := context.Background()
	exact := opts
	exact.MaxCandidates, exact.SkipRecall = -1, true
	opts.SkipRecall = true
	er, err := NewRetriever(kb, exact)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := NewRetriever(kb, opts)
	if err != nil {
		tb.Fatal(err)
	}
	sum, counted := 0.0, 0
	for _, q := range queries {
		want, err := er.Retrieve(ctx, q)
		if err != nil {
			tb.Fatal(err)
		}
		if len(want.Items) == 0 {
			continue
		}
		got, err := r.Retrieve(ctx, q)
		if err != nil {
			tb.Fatal(err)
		}
		found := map[string]bool{}
		for _, it := range got.Items {
			found[it.Page.ID] = true
		}
		hit := 0
		for _, it := range want.Items {
			if found[it.Page.ID] {
				hit++
			}
		}
		sum += float64(hit) / float64(len(want.Items))
		counted++
	}
	if counted == 0 {
		return 1
	}
	return sum / float64(counted)
}
