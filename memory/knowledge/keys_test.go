package knowledge

import (
	"bytes"
	"testing"
)

func TestPostingValue(t *testing.T) {
	title := encodeBigramSet(bigramSet("supervision trees"))
	tests := []struct {
		name       string
		value      []byte
		wantCounts [3]int
		wantTitle  []byte
		wantOK     bool
	}{
		{"counts", postingValue([3]int{3, 40, 600}), [3]int{3, 40, 600}, nil, true},
		{"title posting", titlePostingValue([3]int{16, 0, 1}, title), [3]int{16, 0, 1}, title, true},
		{"empty", nil, [3]int{}, nil, false},
		{"truncated", postingValue([3]int{3, 40, 600})[:2], [3]int{}, nil, false},
		{"unterminated varint", []byte{0x80, 0x80}, [3]int{}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counts, rest, ok := parsePostingValue(tt.value)
			if ok != tt.wantOK {
				t.Fatalf("parsePostingValue ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if counts != tt.wantCounts || !bytes.Equal(rest, tt.wantTitle) {
				t.Errorf("parsePostingValue = %v, %x; want %v, %x", counts, rest, tt.wantCounts, tt.wantTitle)
			}
		})
	}
}

// TestRetriever_TitleFromPosting checks that the title set a title posting
// carries makes the title's share of the score exact before any scoring
// record is read: the best page by title is found reading one record.
func TestRetriever_TitleFromPosting(t *testing.T) {
	ctx := t.Context()
	b := newTestBase(t, Options{})
	pages := []Page{
		{ID: "exact", Title: "actor supervision"},
		{ID: "long", Title: "actor systems and their supervision strategies in practice"},
		{ID: "other", Title: "actor mailboxes"},
	}
	for _, p := range pages {
		if _, err := b.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	r := newTestRetriever(t, b, RetrieverOptions{MaxResults: 1, SkipRecall: true})
	res, err := r.Retrieve(ctx, "actor supervision")
	if err != nil {
		t.Fatal(err)
	}
	if got := resultIDs(res); len(got) != 1 || got[0] != "exact" {
		t.Fatalf("Retrieve ids = %q, want [exact]", got)
	}
	if res.Items[0].Score != WeightTitle {
		t.Errorf("score = %v, want %v", res.Items[0].Score, WeightTitle)
	}
	if res.Candidates != 1 {
		t.Errorf("scoring records read = %d, want 1 (the title bounds rule out the others)", res.Candidates)
	}
}
