package knowledge

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeywords(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"english stop words", "the quick brown fox is fast", []string{"quick", "brown", "fox", "fast"}},
		{"lower-cased and split on punctuation", "Go-Actors: SUPERVISION, trees!", []string{"go", "actors", "supervision", "trees"}},
		{"single characters dropped", "a b c x1 y", []string{"x1"}},
		{"duplicates dropped", "rust Rust RUST go", []string{"rust", "go"}},
		{"digits kept", "http2 port 8080", []string{"http2", "port", "8080"}},
		{"chinese bigrams", "知识库检索", []string{"知识", "识库", "库检", "检索"}},
		{"mixed scripts", "Rust语言", []string{"rust", "语言"}},
		{"single cjk character kept", "Rust 语 言", []string{"rust", "语", "言"}},
		{"japanese", "ひらがなカタカナ", []string{"ひら", "らが", "がな", "なカ", "カタ", "タカ", "カナ"}},
		{"korean", "한국어 검색", []string{"한국", "국어", "검색"}},
		{"accents and marks", "Café naïve", []string{"café", "naïve"}},
		{"empty", "", nil},
		{"only stop words", "the and of", nil},
		{"invalid utf8 splits", "abc\xffdef", []string{"abc", "def"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Keywords(tt.in)); diff != "" {
				t.Errorf("Keywords(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestKeywords_LongTermCut(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	got := Keywords(long)
	if len(got) != 1 || len(got[0]) != MaxTermBytes || got[0] != strings.Repeat("é", MaxTermBytes/2) {
		t.Errorf("Keywords(long) = %q, want one term of %d bytes", got, MaxTermBytes)
	}
}

func TestStopWords(t *testing.T) {
	if n := len(stopWords); n < 120 {
		t.Errorf("%d stop words, want about 150", n)
	}
	for w := range stopWords {
		if w != strings.ToLower(w) || len(Keywords(w)) != 0 {
			t.Errorf("stop word %q is not lower-case or survives extraction", w)
		}
	}
}

func TestDice(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"night", "nacht", 0.25}, // {ni ig gh ht} vs {na ac ch ht}: 2·1/8
		{"rust", "rust", 1},
		{"rust", "", 0},
		{"", "", 0},
		{"a", "a", 0},               // no bigram
		{"Rust", "rust", 4.0 / 6},   // case-sensitive as given: only {us st} shared
		{"abab", "ab", 2.0 * 1 / 3}, // sets: {ab ba} vs {ab}
		{"知识库", "知识", 2.0 / 3},
	}
	for _, tt := range tests {
		if got := Dice(tt.a, tt.b); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Dice(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got, rev := Dice(tt.a, tt.b), Dice(tt.b, tt.a); math.Abs(got-rev) > 1e-12 {
			t.Errorf("Dice(%q, %q) = %v but reversed %v", tt.a, tt.b, got, rev)
		}
	}
}

func TestDiceBound(t *testing.T) {
	for _, s := range []string{"knowledge graph", "rust", "the quick brown fox", "知识库检索"} {
		for _, text := range []string{"graph of knowledge", "rust", "", "quick", "知识"} {
			q := bigramSet(s)
			if d, b := Dice(s, text), diceBound(len(q), countBigrams(text)); d > b {
				t.Errorf("Dice(%q, %q) = %v exceeds its bound %v", s, text, d, b)
			}
		}
	}
}

func FuzzKeywords(f *testing.F) {
	for _, s := range []string{"the quick brown fox is fast", "Rust语言 知识库", "ひらがな", "a\xffb", strings.Repeat("x", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seen := map[string]bool{}
		for _, k := range Keywords(s) {
			switch {
			case k == "" || len(k) > MaxTermBytes:
				t.Fatalf("keyword %q has a bad length", k)
			case strings.ContainsRune(k, '/') || strings.ContainsRune(k, '\uFFFD'):
				t.Fatalf("keyword %q holds a separator", k)
			case isStopWord(k):
				t.Fatalf("stop word %q kept", k)
			case seen[k]:
				t.Fatalf("keyword %q repeated", k)
			}
			seen[k] = true
		}
		d := Dice(s, "the quick brown fox")
		if d < 0 || d > 1 || math.IsNaN(d) {
			t.Fatalf("Dice = %v", d)
		}
	})
}
