package knowledge

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Field weights of the retrieval score: score = 0.5·Dice(title) +
// 0.3·Dice(summary) + 0.2·Dice(content).
const (
	WeightTitle   = 0.5
	WeightSummary = 0.3
	WeightContent = 0.2
)

// MaxScoredContent is how much of a page's content (in bytes, cut on a rune
// boundary) takes part in the Dice score. Every word of the content is
// indexed, so a query still finds a page by a word past this limit; the limit
// only bounds the cost of scoring a long page.
const MaxScoredContent = 4 << 10

// Dice is the Dice coefficient of the sets of character bigrams of a and b:
// 2·|A∩B| / (|A|+|B|). Characters are runes (invalid UTF-8 bytes count as
// U+FFFD); a string of fewer than two characters has no bigram, and Dice is 0
// when either set is empty. Dice is symmetric, in [0, 1], and Dice(x, x) is 1
// for any x of at least two characters. It compares a and b as given; the
// retriever lower-cases both sides first (see Retriever).
func Dice(a, b string) float64 {
	a, b = strings.ToValidUTF8(a, "\uFFFD"), strings.ToValidUTF8(b, "\uFFFD")
	return dice(bigramStrings(a), []byte(b), countBigrams(b))
}

// dice computes the coefficient from the distinct bigrams of one side (as
// strings), the other side's text and its distinct bigram count. A bigram is
// in the text's set exactly when it occurs in the text as a substring, since
// UTF-8 matches only on rune boundaries.
func dice(q [][]byte, text []byte, n int) float64 {
	if len(q) == 0 || n == 0 {
		return 0
	}
	inter := 0
	for _, bg := range q {
		if bytes.Contains(text, bg) {
			inter++
		}
	}
	return 2 * float64(inter) / float64(len(q)+n)
}

// diceBound is the largest Dice a query of q distinct bigrams can reach
// against a text of n distinct bigrams.
func diceBound(q, n int) float64 {
	if q == 0 || n == 0 {
		return 0
	}
	return 2 * float64(min(q, n)) / float64(q+n)
}

// bigramStrings returns the distinct character bigrams of valid UTF-8 s, in
// first-seen order.
func bigramStrings(s string) [][]byte {
	var out [][]byte
	seen := make(map[string]struct{})
	prev := -1
	for i := range s {
		if prev >= 0 {
			_, n := utf8.DecodeRuneInString(s[i:])
			bg := s[prev : i+n]
			if _, ok := seen[bg]; !ok {
				seen[bg] = struct{}{}
				out = append(out, []byte(bg))
			}
		}
		prev = i
	}
	return out
}

// countBigrams returns the number of distinct character bigrams of valid
// UTF-8 s.
func countBigrams(s string) int {
	seen := make(map[uint64]struct{}, len(s))
	var prev rune = -1
	for _, r := range s {
		if prev >= 0 {
			seen[uint64(prev)<<32|uint64(r)] = struct{}{}
		}
		prev = r
	}
	return len(seen)
}

// normalize prepares text for scoring: invalid UTF-8 becomes U+FFFD and the
// text is lower-cased.
func normalize(s string) string {
	return strings.ToLower(strings.ToValidUTF8(s, "\uFFFD"))
}
