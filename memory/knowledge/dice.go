package knowledge

import (
	"encoding/binary"
	"slices"
	"strings"
)

// Field weights of the retrieval score: score = 0.5·Dice(title) +
// 0.3·Dice(summary) + 0.2·Dice(content).
const (
	WeightTitle   = 0.5
	WeightSummary = 0.3
	WeightContent = 0.2
)

// fieldWeights are the weights of the scored fields, in docRecord order.
var fieldWeights = [3]float64{WeightTitle, WeightSummary, WeightContent}

// MaxScoredContent is how much of a page's content (in bytes, cut on a rune
// boundary) takes part in the Dice score. Every word of the content is
// indexed, so a query still finds a page by a word past this limit; the limit
// only bounds the cost of scoring a long page.
const MaxScoredContent = 4 << 10

// Dice is the Dice coefficient of the sets of character bigrams of a and b:
// 2·|A∩B| / (|A|+|B|). Characters are runes (a run of invalid UTF-8 bytes
// counts as one U+FFFD); a string of fewer than two characters has no bigram,
// and Dice is 0 when either set is empty. Dice is symmetric, in [0, 1], and
// Dice(x, x) is 1 for any x of at least two characters. It compares a and b as
// given; the retriever lower-cases both sides first (see Retriever).
func Dice(a, b string) float64 {
	qa := bigramSet(strings.ToValidUTF8(a, "\uFFFD"))
	qb := bigramSet(strings.ToValidUTF8(b, "\uFFFD"))
	return dice(qa, encodeBigramSet(qb), len(qb))
}

// bigram is a character bigram: the first rune in the high 32 bits, the
// second in the low 32 bits. Ordering bigrams as integers is ordering them by
// their runes.
type bigram uint64

// bigramSet returns the distinct character bigrams of s, sorted.
func bigramSet(s string) []bigram {
	var out []bigram
	var prev rune = -1
	for _, r := range s {
		if prev >= 0 {
			out = append(out, bigram(uint64(prev)<<32|uint64(uint32(r))))
		}
		prev = r
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// encodeBigramSet encodes a sorted set of distinct bigrams as the uvarint
// deltas between consecutive bigrams (the first from zero): text made of a
// few scripts has small deltas, so most bigrams take one or two bytes.
func encodeBigramSet(set []bigram) []byte {
	b := make([]byte, 0, 2*len(set))
	var prev bigram
	for _, g := range set {
		b = binary.AppendUvarint(b, uint64(g-prev))
		prev = g
	}
	return b
}

// dice computes the Dice coefficient of the sorted distinct bigrams q and the
// encoded set enc of n bigrams (see encodeBigramSet), by merging the two.
// A malformed enc counts the bigrams decoded before the fault.
func dice(q []bigram, enc []byte, n int) float64 {
	if len(q) == 0 || n == 0 {
		return 0
	}
	return 2 * float64(intersect(q, enc)) / float64(len(q)+n)
}

// intersect counts the bigrams of q that are in the encoded set enc.
func intersect(q []bigram, enc []byte) int {
	inter, i := 0, 0
	var g bigram
	for len(enc) > 0 && i < len(q) {
		d, k := binary.Uvarint(enc)
		if k <= 0 {
			break
		}
		enc = enc[k:]
		g += bigram(d)
		for i < len(q) && q[i] < g {
			i++
		}
		if i < len(q) && q[i] == g {
			inter++
			i++
		}
	}
	return inter
}

// diceBound is the largest Dice a query of q distinct bigrams can reach
// against a text of n distinct bigrams.
func diceBound(q, n int) float64 {
	if q == 0 || n == 0 {
		return 0
	}
	return 2 * float64(min(q, n)) / float64(q+n)
}

// countBigrams returns the number of distinct character bigrams of valid
// UTF-8 s.
func countBigrams(s string) int { return len(bigramSet(s)) }

// normalize prepares text for scoring: invalid UTF-8 becomes U+FFFD and the
// text is lower-cased.
func normalize(s string) string {
	return strings.ToLower(strings.ToValidUTF8(s, "\uFFFD"))
}
