package knowledge

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
)

func TestRetriever_EmptyQuery(t *testing.T) {
	b := newTestBase(t, Options{})
	mustCreate(t, b, Page{ID: "p", Title: "the"})
	r := newTestRetriever(t, b, RetrieverOptions{})
	for _, q := range []string{"", "   ", "the is a", "!!"} {
		res, err := r.Retrieve(context.Background(), q)
		if err != nil || len(res.Items) != 0 || res.Candidates != 0 {
			t.Errorf("Retrieve(%q) = %d items, %d candidates, %v; want nothing", q, len(res.Items), res.Candidates, err)
		}
	}
}

func TestRetriever_Weights(t *testing.T) {
	const q = "stategraph"
	b := newTestBase(t, Options{})
	mustCreate(t, b,
		Page{ID: "title", Title: q},
		Page{ID: "summary", Summary: q},
		Page{ID: "content", Content: q},
		Page{ID: "all", Title: q, Summary: q, Content: q},
		Page{ID: "tag", Tags: []string{q}},
	)
	r := newTestRetriever(t, b, RetrieverOptions{MinScore: -1})
	res, err := r.Retrieve(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, it := range res.Items {
		got[it.Page.ID] = it.Score
	}
	want := map[string]float64{"all": 1, "title": WeightTitle, "summary": WeightSummary, "content": WeightContent, "tag": 0}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"all", "title", "summary", "content", "tag"}, resultIDs(res)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestRetriever_MinScore(t *testing.T) {
	b := newTestBase(t, Options{})
	mustCreate(t, b,
		Page{ID: "p1", Title: "LangGraph state machines", Summary: "Graphs of agents"},
		Page{ID: "p2", Title: "Eggs", Content: "Boil them for nine minutes; the yolk state matters to cooks who like firm eggs"},
	)
	tests := []struct {
		name     string
		minScore float64
		query    string
		want     []string
	}{
		{"default keeps the match", 0, "LangGraph state", []string{"p1"}},
		{"high threshold drops all", 0.99, "LangGraph state", nil},
		{"unrelated query", 0, "quantum chromodynamics", nil},
		{"negative keeps every candidate", -1, "LangGraph state", []string{"p1", "p2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRetriever(t, b, RetrieverOptions{MinScore: tt.minScore, SkipRecall: true})
			res, err := r.Retrieve(context.Background(), tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resultIDs(res), cmp.Comparer(func(a, b []string) bool {
				return slices.Equal(a, b) || (len(a) == 0 && len(b) == 0)
			})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, it := range res.Items {
				if it.Score < max(tt.minScore, 0) || (tt.minScore == 0 && it.Score < 0.1) {
					t.Errorf("page %s scored %v, below the minimum", it.Page.ID, it.Score)
				}
			}
		})
	}
}

func TestRetriever_OrderByScoreThenRecency(t *testing.T) {
	b := newTestBase(t, Options{}) // the clock advances a second per write
	mustCreate(t, b,
		Page{ID: "old", Title: "badger inverted index"},
		Page{ID: "best", Title: "badger index"},
		Page{ID: "new", Title: "badger inverted index"},
		Page{ID: "weak", Summary: "badger index"},
	)
	r := newTestRetriever(t, b, RetrieverOptions{})
	res, err := r.Retrieve(context.Background(), "Badger index")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"best", "new", "old", "weak"}, resultIDs(res)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if res.Items[1].Score != res.Items[2].Score {
		t.Errorf("equal pages scored %v and %v", res.Items[1].Score, res.Items[2].Score)
	}
}

func TestRetriever_MaxResults(t *testing.T) {
	b := newTestBase(t, Options{})
	for i := range 30 {
		mustCreate(t, b, Page{ID: fmt.Sprintf("p%02d", i), Title: "knowledge retrieval " + strings.Repeat("x", i)})
	}
	for _, tt := range []struct{ max, want int }{{2, 2}, {0, 20}, {50, 30}} {
		r := newTestRetriever(t, b, RetrieverOptions{MaxResults: tt.max, SkipRecall: true})
		res, err := r.Retrieve(context.Background(), "knowledge retrieval")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Items) != tt.want {
			t.Errorf("MaxResults %d: %d items, want %d", tt.max, len(res.Items), tt.want)
		}
		// The shortest titles are closest to the query.
		if res.Items[0].Page.ID != "p00" {
			t.Errorf("MaxResults %d: first %s, want p00", tt.max, res.Items[0].Page.ID)
		}
	}
}

func TestRetriever_TouchesCandidatesOnly(t *testing.T) {
	b := newTestBase(t, Options{})
	for i := range 500 {
		mustCreate(t, b, Page{ID: fmt.Sprintf("filler-%03d", i), Title: "Notes on memory allocation",
			Content: "Arenas, pools and slabs are strategies for managing memory."})
	}
	mustCreate(t, b,
		Page{ID: "z1", Title: "Zebra migration"},
		Page{ID: "z2", Summary: "How a zebra sleeps"},
		Page{ID: "z3", Content: "notes about the zebra genome", Title: "Genomes"},
	)
	r := newTestRetriever(t, b, RetrieverOptions{MinScore: -1})
	res, err := r.Retrieve(context.Background(), "zebra")
	if err != nil {
		t.Fatal(err)
	}
	if res.Candidates != 3 || res.Truncated {
		t.Errorf("Candidates = %d (truncated %v), want 3 out of 503 pages", res.Candidates, res.Truncated)
	}
	if diff := cmp.Diff([]string{"z1", "z2", "z3"}, resultIDs(res)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRetriever_MaxCandidates(t *testing.T) {
	b := newTestBase(t, Options{})
	for i := range 50 {
		mustCreate(t, b, Page{ID: fmt.Sprintf("c%02d", i), Content: "badger storage engine"})
	}
	mustCreate(t, b, Page{ID: "t", Title: "badger"})
	r := newTestRetriever(t, b, RetrieverOptions{MaxCandidates: 10, MinScore: -1})
	res, err := r.Retrieve(context.Background(), "badger")
	if err != nil {
		t.Fatal(err)
	}
	if res.Candidates != 10 || !res.Truncated {
		t.Errorf("Candidates = %d, truncated %v; want 10, true", res.Candidates, res.Truncated)
	}
	if len(res.Items) == 0 || res.Items[0].Page.ID != "t" {
		t.Errorf("the title match must be read first; got %v", resultIDs(res))
	}
}

func TestRetriever_ContentIsSearched(t *testing.T) {
	b := newTestBase(t, Options{})
	long := strings.Repeat("padding words here ", 400) + "serendipity" // past MaxScoredContent
	mustCreate(t, b, Page{ID: "p", Title: "Unrelated", Content: long})
	r := newTestRetriever(t, b, RetrieverOptions{MinScore: -1})
	res, err := r.Retrieve(context.Background(), "serendipity")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"p"}, resultIDs(res)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRetriever_CaseInsensitiveAndCJK(t *testing.T) {
	b := newTestBase(t, Options{})
	mustCreate(t, b,
		Page{ID: "rust", Title: "Rust 语言"},
		Page{ID: "kb", Title: "知识库检索", Summary: "基于关键词"},
	)
	r := newTestRetriever(t, b, RetrieverOptions{})
	for _, tt := range []struct {
		q    string
		want string
	}{{"RUST 语言", "rust"}, {"rust 语言", "rust"}, {"知识库", "kb"}} {
		res, err := r.Retrieve(context.Background(), tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Items) == 0 || res.Items[0].Page.ID != tt.want {
			t.Errorf("Retrieve(%q) = %v, want %s first", tt.q, resultIDs(res), tt.want)
		}
	}
	res, _ := r.Retrieve(context.Background(), "Rust 语言")
	if len(res.Items) == 0 || math.Abs(res.Items[0].Score-WeightTitle) > 1e-9 {
		t.Errorf("exact title in another case should score %v: %+v", WeightTitle, res.Items)
	}
}

func TestRetriever_RecordsRecalls(t *testing.T) {
	ctx := context.Background()
	b := newTestBase(t, Options{})
	mustCreate(t, b, Page{ID: "p", Title: "actor supervision"})
	r := newTestRetriever(t, b, RetrieverOptions{})
	for want := int64(1); want <= 3; want++ {
		res, err := r.Retrieve(ctx, "actor supervision")
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Items[0].Page.AccessCount; got != want {
			t.Errorf("AccessCount after recall %d = %d", want, got)
		}
	}
	p, err := b.Get(ctx, "p")
	if err != nil || p.AccessCount != 3 {
		t.Errorf("Get: AccessCount %d, %v; want 3 (Get itself does not count)", p.AccessCount, err)
	}
	if p, _ = b.Get(ctx, "p"); p.AccessCount != 3 {
		t.Errorf("a second Get changed AccessCount to %d", p.AccessCount)
	}
	// Updating the page keeps its statistics; a skip-recall retriever does
	// not count.
	if _, err := b.Update(ctx, Page{ID: "p", Title: "actor supervision trees"}); err != nil {
		t.Fatal(err)
	}
	quiet := newTestRetriever(t, b, RetrieverOptions{SkipRecall: true})
	if res, _ := quiet.Retrieve(ctx, "actor supervision"); res.Items[0].Page.AccessCount != 3 {
		t.Errorf("AccessCount = %d, want 3", res.Items[0].Page.AccessCount)
	}
	var s recallStats
	_ = b.db.View(func(txn *badger.Txn) error { s, err = loadStats(txn, "p"); return err })
	if s.recalls != 3 || math.Abs(s.avgScore()-WeightTitle) > 1e-9 {
		t.Errorf("stats = %+v, want 3 recalls averaging %v", s, WeightTitle)
	}
}

func TestIndex_Maintenance(t *testing.T) {
	ctx := context.Background()
	b := newTestBase(t, Options{})
	r := newTestRetriever(t, b, RetrieverOptions{MinScore: -1, SkipRecall: true})
	find := func(q string) []string {
		t.Helper()
		res, err := r.Retrieve(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return resultIDs(res)
	}
	mustCreate(t, b, Page{ID: "p", Title: "alpha beta", Content: "gamma", Tags: []string{"delta"}})
	for _, q := range []string{"alpha", "beta", "gamma", "delta"} {
		if got := find(q); !slices.Equal(got, []string{"p"}) {
			t.Errorf("find(%q) = %v before update", q, got)
		}
	}
	if _, err := b.Update(ctx, Page{ID: "p", Title: "alpha epsilon"}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]string{"alpha": {"p"}, "epsilon": {"p"}, "beta": nil, "gamma": nil, "delta": nil} {
		if got := find(q); !slices.Equal(got, want) {
			t.Errorf("find(%q) = %v after update, want %v", q, got, want)
		}
	}
	for _, term := range []string{"beta", "gamma", "delta"} {
		if keys := keysWithPrefix(t, b, prefixIndex+term+"/"); len(keys) != 0 {
			t.Errorf("postings of the old term %q remain: %q", term, keys)
		}
	}
	if err := b.Delete(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	// Only the layout marker of the Base remains.
	if keys := keysWithPrefix(t, b, memory.PrefixKnowledge); !slices.Equal(keys, []string{formatKey}) {
		t.Errorf("keys left after Delete: %q, want only %q", keys, formatKey)
	}
}

func TestRetriever_StalePostingsSkippedAndDropped(t *testing.T) {
	ctx := context.Background()
	b := newTestBase(t, Options{})
	mustCreate(t, b, Page{ID: "live", Title: "orphan postings"})
	err := b.db.Update(func(txn *badger.Txn) error {
		return txn.Set(postingKey("orphan", fieldTitle, 3, "ghost"), postingValue([3]int{3, 0, 0}))
	})
	if err != nil {
		t.Fatal(err)
	}
	r := newTestRetriever(t, b, RetrieverOptions{})
	res, err := r.Retrieve(ctx, "orphan")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"live"}, resultIDs(res)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if keys := keysWithPrefix(t, b, string(postingKey("orphan", fieldTitle, 3, "ghost"))); len(keys) != 0 {
		t.Errorf("stale posting not deleted: %q", keys)
	}
}

func TestBase_Rebuild(t *testing.T) {
	ctx := context.Background()
	b := newTestBase(t, Options{})
	mustCreate(t, b,
		Page{ID: "a", Title: "supervision trees", Tags: []string{"actors"}},
		Page{ID: "b", Title: "journal durability", Content: "fsync group commit"},
	)
	if _, err := RecordRecallHelper(b, "a"); err != nil {
		t.Fatal(err)
	}
	want := keysWithPrefix(t, b, memory.PrefixKnowledge)
	// Wreck the index: drop every derived key and add junk.
	err := b.db.Update(func(txn *badger.Txn) error {
		for _, p := range derivedPrefixes {
			for _, k := range keysWithPrefix(t, b, p) {
				if err := txn.Delete([]byte(k)); err != nil {
					return err
				}
			}
		}
		if err := txn.Set(postingKey("junk", fieldContent, 0, "gone"), nil); err != nil {
			return err
		}
		return txn.Set(statsKey("gone"), recallStats{recalls: 1}.marshal())
	})
	if err != nil {
		t.Fatal(err)
	}
	r := newTestRetriever(t, b, RetrieverOptions{SkipRecall: true})
	if res, _ := r.Retrieve(ctx, "supervision trees"); len(res.Items) != 0 {
		t.Fatalf("wrecked index still answers: %v", resultIDs(res))
	}
	rep, err := b.Rebuild(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pages != 2 || rep.Removed != 2 || rep.Postings == 0 || len(rep.Corrupt) != 0 {
		t.Errorf("report = %+v, want 2 pages, 2 removed, some postings", rep)
	}
	if diff := cmp.Diff(want, keysWithPrefix(t, b, memory.PrefixKnowledge)); diff != "" {
		t.Errorf("keys after Rebuild (-want +got):\n%s", diff)
	}
	if res, _ := r.Retrieve(ctx, "supervision trees"); !slices.Equal(resultIDs(res), []string{"a"}) {
		t.Errorf("after Rebuild: %v, want [a]", resultIDs(res))
	}
	if err := b.db.Update(func(txn *badger.Txn) error { return txn.Set(pageKey("bad"), []byte("{")) }); err != nil {
		t.Fatal(err)
	}
	if rep, err = b.Rebuild(ctx); err != nil || !slices.Equal(rep.Corrupt, []string{"bad"}) {
		t.Errorf("Rebuild with a corrupt page: %+v, %v; want Corrupt [bad]", rep, err)
	}
}

// RecordRecallHelper records one recall of id with score 0.5.
func RecordRecallHelper(b *Base, id string) (map[string]int64, error) {
	return b.RecordRecall(context.Background(), Recall{ID: id, Score: 0.5})
}

func TestBase_ReopenKeepsIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() (*memory.Store, *Retriever) {
		st, err := memory.Open(memory.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st, newTestRetriever(t, b, RetrieverOptions{})
	}
	st, r := open()
	mustCreate(t, r.base, Page{ID: "p", Title: "durable knowledge", Tags: []string{"disk"}})
	if _, err := r.Retrieve(ctx, "durable knowledge"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, r = open()
	defer st.Close()
	res, err := r.Retrieve(ctx, "durable knowledge")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || res.Items[0].Page.AccessCount != 2 {
		t.Errorf("after reopen: %+v, want p with 2 recalls", res.Items)
	}
	if got := collect(t, r.base.ListByTag(ctx, "disk", "")); !slices.Equal(got, []string{"p"}) {
		t.Errorf("ListByTag after reopen = %v", got)
	}
}

func TestRetriever_Concurrent(t *testing.T) {
	ctx := context.Background()
	b := newTestBase(t, Options{Clock: time.Now})
	r := newTestRetriever(t, b, RetrieverOptions{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				id := fmt.Sprintf("w%d-%d", w, i%5)
				if _, err := b.Upsert(ctx, Page{ID: id, Title: fmt.Sprintf("shared topic %d", i)}); err != nil {
					errs <- err
					return
				}
				if _, err := r.Retrieve(ctx, "shared topic"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, _ := b.Count(ctx); n != 20 {
		t.Errorf("Count = %d, want 20", n)
	}
}

func FuzzRetrieve(f *testing.F) {
	for _, s := range [][2]string{
		{"knowledge graph", "Knowledge graphs link entities"},
		{"Rust 语言", "Rust 语言编程"},
		{"\xff\xfe", "a\x00b"},
		{"the", "the the the"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, query, text string) {
		ctx := context.Background()
		b := newTestBase(t, Options{})
		mustCreate(t, b,
			Page{ID: "title", Title: text},
			Page{ID: "content", Title: "fixed", Summary: text, Content: text + " " + query},
			Page{ID: "query", Title: query, Tags: []string{"t"}},
		)
		r := newTestRetriever(t, b, RetrieverOptions{MinScore: -1, MaxResults: 2})
		res, err := r.Retrieve(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Items) > 2 {
			t.Fatalf("%d items, want at most 2", len(res.Items))
		}
		for i, it := range res.Items {
			if it.Score < 0 || it.Score > 1+1e-9 || math.IsNaN(it.Score) {
				t.Fatalf("score %v out of [0, 1]", it.Score)
			}
			if i > 0 && it.Score > res.Items[i-1].Score {
				t.Fatalf("items out of order: %v then %v", res.Items[i-1].Score, it.Score)
			}
		}
	})
}

// TestRetriever_AgreesWithExhaustive checks, on a generated corpus, that the
// budgeted retriever finds most of the top results of an exhaustive search,
// and that the exhaustive search ranks exactly as scoring every page would.
func TestRetriever_AgreesWithExhaustive(t *testing.T) {
	ctx := context.Background()
	const n = 1500
	c := newCorpus(3000, 11)
	b := newTestBase(t, Options{})
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var pages []Page
	for i := range n {
		pages = append(pages, c.page(i, created))
	}
	if _, err := b.Import(ctx, pagesOf(pages...)); err != nil {
		t.Fatal(err)
	}
	queries := make([]string, 40)
	for i := range queries {
		queries[i] = c.query(i, n)
	}
	// A small budget, so that it binds on this corpus.
	small := RetrieverOptions{MaxCandidates: 100, MaxPostings: 1000}
	if got := topOverlap(t, b, small, queries); got < 0.6 {
		t.Errorf("top-20 overlap with the exhaustive search = %.3f, want at least 0.6", got)
	}
	// The exhaustive search against a brute-force scan of the union.
	exact := newTestRetriever(t, b, RetrieverOptions{MaxCandidates: -1, SkipRecall: true})
	for _, q := range queries[:5] {
		res, err := exact.Retrieve(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var want []scored
		terms := Keywords(q)
		for _, p := range pages {
			keys := derivedKeys(&p, newDocRecord(&p).bigrams)
			inUnion := false
			for _, term := range terms {
				for _, f := range queryFields {
					k := string(postingKey(term, f, postingRank(f, newDocRecord(&p).bigrams), p.ID))
					if _, ok := keys[k]; ok {
						inUnion = true
					}
				}
			}
			if !inUnion {
				continue
			}
			nq := normalize(q)
			s := WeightTitle*Dice(nq, normalize(p.Title)) + WeightSummary*Dice(nq, normalize(p.Summary)) +
				WeightContent*Dice(nq, normalize(cutUTF8(p.Content, MaxScoredContent)))
			if s >= 0.1 {
				got, _ := b.Get(ctx, p.ID)
				want = append(want, scored{id: p.ID, score: s, updated: got.Updated})
			}
		}
		slices.SortFunc(want, better)
		want = want[:min(len(want), 20)]
		var wantIDs []string
		for _, s := range want {
			wantIDs = append(wantIDs, s.id)
		}
		if diff := cmp.Diff(wantIDs, resultIDs(res)); diff != "" {
			t.Errorf("Retrieve(%q) exhaustive (-brute force +got):\n%s", q, diff)
		}
	}
}
