package benchsuite

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/knowledge"
)

// RetrievalConfig sizes the retrieval workload. Zero fields take the
// defaults of the full run (quick-run defaults in parentheses).
type RetrievalConfig struct {
	// Dir is the parent of the temporary data directory. Empty means
	// os.TempDir().
	Dir string
	// Pages is the size of the corpus. Zero means 100,000 (10,000).
	Pages int
	// Queries is the number of measured queries. Zero means 1,000 (300).
	Queries int
	// BaselineQueries is how many of them also run, alternately, on an
	// exhaustive retriever. Zero means 100 (50).
	BaselineQueries int
}

func (c RetrievalConfig) withDefaults(quick bool) RetrievalConfig {
	c.Pages = orDefault(c.Pages, 100_000, 10_000, quick)
	c.Queries = orDefault(c.Queries, 1000, 300, quick)
	c.BaselineQueries = min(orDefault(c.BaselineQueries, 100, 50, quick), c.Queries)
	return c
}

// RetrievalResult describes knowledge retrieval over a generated corpus.
type RetrievalResult struct {
	// Pages is the size of the corpus.
	Pages int `json:"pages"`
	// Queries is the number of queries timed on the default retriever.
	Queries int `json:"queries"`
	// ImportPagesPerSecond is the rate of the bulk import that built the
	// corpus (pages, tag index and inverted index).
	ImportPagesPerSecond float64 `json:"import_pages_per_s"`
	// IndexBytes is the size of the data directory on disk after the
	// import, pages included.
	IndexBytes int64 `json:"index_bytes"`
	// P50Millis and P99Millis are the latencies of the default retriever.
	P50Millis float64 `json:"p50_ms"`
	P99Millis float64 `json:"p99_ms"`
	// BaselineQueries ran on both retrievers, alternately.
	BaselineQueries int `json:"baseline_queries"`
	// PairedP50Millis and ExhaustiveP50Millis are the median latencies of
	// the default and the exhaustive retrievers over those queries.
	PairedP50Millis     float64 `json:"paired_p50_ms"`
	ExhaustiveP50Millis float64 `json:"exhaustive_p50_ms"`
	// SpeedUp is the median of the per-query ratios exhaustive/default.
	SpeedUp float64 `json:"speed_up"`
	// TopOverlap is the mean fraction of the exhaustive top results that
	// the default retriever also returned.
	TopOverlap float64 `json:"top_overlap"`
}

// Retrieval builds a corpus of generated pages in an on-disk store with
// knowledge.Base.Import, reopens the store, and times queries about the
// pages with the default knowledge.Retriever (recall recording included).
// Its baseline, alternated with it on the first BaselineQueries queries,
// is an exhaustive retriever (no posting or candidate budget) over the
// same index, which also gives the quality of the default's top results.
func Retrieval(ctx context.Context, cfg RetrievalConfig) (*RetrievalResult, error) {
	cfg = cfg.withDefaults(false)
	dir, err := os.MkdirTemp(cfg.Dir, "agcore-bench-knowledge-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	c := newCorpus(20_000, 42)
	res := &RetrievalResult{Pages: cfg.Pages, Queries: cfg.Queries, BaselineQueries: cfg.BaselineQueries}

	opts := memory.Options{Dir: dir, MemTableSize: 64 << 20}
	store, err := memory.Open(opts)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	kb, err := knowledge.New(store, knowledge.Options{})
	if err == nil {
		_, err = kb.Import(ctx, c.pages(cfg.Pages))
	}
	if cerr := store.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	res.ImportPagesPerSecond = float64(cfg.Pages) / time.Since(start).Seconds()
	if res.IndexBytes, err = dirSize(dir); err != nil {
		return nil, err
	}

	if store, err = memory.Open(opts); err != nil {
		return nil, err
	}
	defer store.Close()
	if kb, err = knowledge.New(store, knowledge.Options{}); err != nil {
		return nil, err
	}
	def, err := knowledge.NewRetriever(kb, knowledge.RetrieverOptions{})
	if err != nil {
		return nil, err
	}
	exact, err := knowledge.NewRetriever(kb, knowledge.RetrieverOptions{MaxPostings: -1, MaxCandidates: -1, SkipRecall: true})
	if err != nil {
		return nil, err
	}
	timed := func(r *knowledge.Retriever, q string) (knowledge.Result, float64, error) {
		t0 := time.Now()
		out, err := r.Retrieve(ctx, q)
		return out, millis(time.Since(t0)), err
	}
	lat := make([]float64, 0, cfg.Queries)
	var paired, exhaustive, speedUps []float64
	overlap, counted := 0.0, 0
	for i := range cfg.Queries {
		q := c.query(i, cfg.Pages)
		if i >= cfg.BaselineQueries {
			_, d, err := timed(def, q)
			if err != nil {
				return nil, err
			}
			lat = append(lat, d)
			continue
		}
		var got, want knowledge.Result
		var dGot, dWant float64
		if i%2 == 0 {
			got, dGot, err = timed(def, q)
			if err == nil {
				want, dWant, err = timed(exact, q)
			}
		} else {
			want, dWant, err = timed(exact, q)
			if err == nil {
				got, dGot, err = timed(def, q)
			}
		}
		if err != nil {
			return nil, err
		}
		lat = append(lat, dGot)
		paired, exhaustive = append(paired, dGot), append(exhaustive, dWant)
		speedUps = append(speedUps, ratio(dWant, dGot))
		if len(want.Items) > 0 {
			overlap += topOverlap(got, want)
			counted++
		}
	}
	res.P50Millis, res.P99Millis = percentile(lat, 0.5), percentile(lat, 0.99)
	res.PairedP50Millis, res.ExhaustiveP50Millis, res.SpeedUp = median(paired), median(exhaustive), median(speedUps)
	res.TopOverlap = 1
	if counted > 0 {
		res.TopOverlap = overlap / float64(counted)
	}
	return res, nil
}

// topOverlap is the fraction of want's pages that got also has.
func topOverlap(got, want knowledge.Result) float64 {
	found := make(map[string]bool, len(got.Items))
	for _, it := range got.Items {
		found[it.Page.ID] = true
	}
	hit := 0
	for _, it := range want.Items {
		if found[it.Page.ID] {
			hit++
		}
	}
	return float64(hit) / float64(len(want.Items))
}

// dirSize is the total size of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}

// Table lays the result out.
func (r *RetrievalResult) Table() Table {
	return Table{
		Title:   fmt.Sprintf("knowledge retrieval (%s generated pages on disk, %s queries)", fmtInt(r.Pages), fmtInt(r.Queries)),
		Columns: []string{"p50 query", "p99 query", "exhaustive p50", "speed-up vs exhaustive", "top-20 overlap", "size on disk", "import"},
		Rows: [][]string{{fmtFloat(r.P50Millis, 3) + " ms", fmtFloat(r.P99Millis, 3) + " ms", fmtFloat(r.ExhaustiveP50Millis, 3) + " ms",
			fmtRatio(r.SpeedUp), fmt.Sprintf("%.0f %%", 100*r.TopOverlap), fmtMiB(float64(r.IndexBytes)), fmtRate(r.ImportPagesPerSecond) + " pages/s"}},
		Notes: []string{
			fmt.Sprintf("the exhaustive retriever (every posting read, every candidate scored) ran alternately on the first %d queries;", r.BaselineQueries),
			"speed-up and overlap compare the two on those queries. Size on disk counts pages, tag index and inverted index.",
		},
	}
}
