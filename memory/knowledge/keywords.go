package knowledge

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTermBytes is the longest keyword kept; longer runs of letters and digits
// (hashes, base64 blobs) are cut to this many bytes on a rune boundary, both
// when pages are indexed and when queries are parsed, so the two agree.
const MaxTermBytes = 64

// Keywords extracts the search terms of text, in first-seen order and without
// duplicates. It is the tokenizer of both the inverted index and the queries:
//
//   - text is split on every rune that is not a letter, a digit or a
//     combining mark (Unicode-aware);
//   - tokens are lower-cased;
//   - runs of CJK characters (Han, Hiragana, Katakana, Hangul) become
//     overlapping character bigrams ("知识库" gives "知识" and "识库"); a run of a
//     single CJK character is kept as it is;
//   - other tokens shorter than 2 characters and English stop words are
//     dropped.
//
// Keywords("the quick brown fox is fast") is [quick brown fox fast].
func Keywords(text string) []string {
	var out []string
	seen := make(map[string]struct{})
	add := func(term string) {
		if len(term) > MaxTermBytes {
			term = cutUTF8(term, MaxTermBytes)
		}
		if _, ok := seen[term]; ok {
			return
		}
		seen[term] = struct{}{}
		out = append(out, term)
	}
	forEachToken(text, func(tok string) {
		tok = strings.ToLower(tok)
		// Split the token into CJK and non-CJK runs.
		start, cjk := 0, false
		flush := func(end int) {
			if end <= start {
				return
			}
			run := tok[start:end]
			if cjk {
				cjkBigrams(run, add)
				return
			}
			if utf8.RuneCountInString(run) < 2 || isStopWord(run) {
				return
			}
			add(run)
		}
		for i, r := range tok {
			c := isCJK(r)
			if i == 0 {
				cjk = c
				continue
			}
			if c != cjk {
				flush(i)
				start, cjk = i, c
			}
		}
		flush(len(tok))
	})
	return out
}

// forEachToken calls fn with every maximal run of letters, digits and marks.
func forEachToken(text string, fn func(string)) {
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r)
		if r == utf8.RuneError {
			word = false
		}
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			fn(text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// cjkBigrams emits the overlapping bigrams of a run of CJK characters, or the
// single character when the run has one.
func cjkBigrams(run string, emit func(string)) {
	_, size := utf8.DecodeRuneInString(run)
	if size == len(run) {
		emit(run)
		return
	}
	prev := 0
	i := size
	for i < len(run) {
		_, n := utf8.DecodeRuneInString(run[i:])
		emit(run[prev : i+n])
		prev = i
		i += n
	}
}

// isCJK reports whether r is a Han, Hiragana, Katakana or Hangul character.
func isCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo: nothing CJK
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// cutUTF8 returns the longest prefix of s of at most n bytes that ends on a
// rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// isStopWord reports whether the lower-case word w is an English stop word.
func isStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

// stopWords is the English stop list: articles, pronouns, auxiliaries,
// prepositions, conjunctions and frequent adverbs that carry no topic. It is
// read-only.
var stopWords = func() map[string]struct{} {
	words := strings.Fields(`
a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during
each few for from further had has have having he her here hers herself him
himself his how if in into is it its itself just me more most my myself no nor
not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves
also may might must shall upon via within without yet i
isn aren wasn weren don doesn didn won wouldn shouldn couldn cannot
let lets ll re ve its etc per however thus therefore`)
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}()
