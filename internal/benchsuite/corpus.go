package benchsuite

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/agcore/agcore/memory/knowledge"
)

// commonWords head the corpus vocabulary; the rest is made of syllables.
// Word frequencies follow Zipf's law, as in natural text.
var commonWords = strings.Fields(`system memory agent model data process service request user message tool
session network server client cache index query page file stream event error result state actor graph node
storage journal snapshot record table key value config policy budget token context prompt window summary
content title retrieval search keyword score rank vector store engine runtime worker queue channel timeout
retry backoff supervisor restart crash recovery durability commit compaction eviction latency throughput
benchmark metric trace schema field type interface method function parameter module package library protocol
transport socket document knowledge concept entity relation tag version release build test deploy cluster
replica leader shard partition security permission secret sandbox workspace path directory command shell`)

// corpus generates knowledge pages and queries about them,
// deterministically from a seed.
type corpus struct {
	vocab []string
	seed  uint64
}

// newCorpus returns a corpus whose vocabulary has size words.
func newCorpus(size int, seed uint64) *corpus {
	c := &corpus{seed: seed, vocab: append([]string(nil), commonWords...)}
	syll := strings.Fields("ka ri to mo ne sa lu vi de po an el or is un ber tan gor lim quo zen fra ste")
	r := rand.New(rand.NewPCG(seed, 0))
	seen := make(map[string]bool, size)
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

func (c *corpus) words(z *rand.Zipf, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = c.vocab[z.Uint64()]
	}
	return strings.Join(ws, " ")
}

// page returns page i: a title of 3 to 7 words, a summary of 10 to 25,
// 50 to 150 words of content and 1 to 3 tags.
func (c *corpus) page(i int) knowledge.Page {
	r := rand.New(rand.NewPCG(c.seed, uint64(i)+1))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(c.vocab)-1))
	tags := make([]string, 1+r.IntN(3))
	for j := range tags {
		tags[j] = commonWords[r.IntN(len(commonWords))]
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	return knowledge.Page{
		ID:      fmt.Sprintf("p%07d", i),
		Title:   c.words(z, 3+r.IntN(5)),
		Summary: c.words(z, 10+r.IntN(16)) + ".",
		Content: c.words(z, 50+r.IntN(101)) + ".",
		Tags:    tags,
		Created: created, Updated: created,
	}
}

// pages yields the first n pages.
func (c *corpus) pages(n int) iter.Seq[knowledge.Page] {
	return func(yield func(knowledge.Page) bool) {
		for i := range n {
			if !yield(c.page(i)) {
				return
			}
		}
	}
}

// query returns query i about one of the first n pages: two or three words
// of its title, sometimes with a common word added.
func (c *corpus) query(i, n int) string {
	r := rand.New(rand.NewPCG(c.seed^0x9e3779b97f4a7c15, uint64(i)))
	words := strings.Fields(c.page(r.IntN(n)).Title)
	q := strings.Join(words[:min(len(words), 2+r.IntN(2))], " ")
	if r.IntN(3) == 0 {
		q += " " + commonWords[r.IntN(len(commonWords))]
	}
	return q
}
