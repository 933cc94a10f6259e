package knowledge

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/agcore/agcore/memory"
)

// Key layout. Every key starts with memory.PrefixKnowledge ("k/"):
//
//	k/p/<id>                     the page, JSON
//	k/d/<id>                     the scoring record of the page (docRecord)
//	k/s/<id>                     the recall statistics of the page (recallStats)
//	k/c/<created: 8 bytes>/<id>  creation order, for capacity eviction
//	k/t/<tag>/<id>               tag index, for ListByTag
//	k/i/<term>/<field><rank: 2 bytes big-endian><id>
//	                             inverted index: one posting per term and field
//	k/f                          the version of the derived-key format
//
// Ids and tags never contain '/', and terms are made of letters and digits
// only, so a prefix never reaches into a neighbour's keys. The field byte of a
// posting is one of fieldTitle, fieldSummary, fieldTags, fieldContent: the
// postings of a term are grouped by field. Within a field they are ordered by
// rank, the number of distinct bigrams of that field of the page (see
// postingRank): a match in a shorter field weighs more in the Dice score, so
// a query reading a posting list from its start meets the pages the term can
// lift most first, and may stop early. The value of a posting holds the
// bigram counts of the page's three scored fields (see postingValue), which
// bound its score without reading its scoring record; the value of a title
// posting also holds the title's bigram set, so that the title's share of
// the score (half of it) is known exactly from the posting.
const (
	prefixPage    = memory.PrefixKnowledge + "p/"
	prefixDoc     = memory.PrefixKnowledge + "d/"
	prefixStats   = memory.PrefixKnowledge + "s/"
	prefixCreated = memory.PrefixKnowledge + "c/"
	prefixTag     = memory.PrefixKnowledge + "t/"
	prefixIndex   = memory.PrefixKnowledge + "i/"
	formatKey     = memory.PrefixKnowledge + "f"
)

// indexFormat is the version of the layout of the derived keys (scoring
// records and postings). New rebuilds the derived keys of a Base written with
// another version.
const indexFormat = 3

// Posting fields, in the order a query reads them.
const (
	fieldTitle   byte = 't'
	fieldSummary byte = 's'
	fieldTags    byte = 'g'
	fieldContent byte = 'c'
)

// queryFields is the order in which a query reads postings.
var queryFields = [...]byte{fieldTitle, fieldSummary, fieldTags, fieldContent}

func pageKey(id string) []byte  { return []byte(prefixPage + id) }
func docKey(id string) []byte   { return []byte(prefixDoc + id) }
func statsKey(id string) []byte { return []byte(prefixStats + id) }

func tagPrefix(tag string) []byte  { return []byte(prefixTag + tag + "/") }
func tagKey(tag, id string) []byte { return []byte(prefixTag + tag + "/" + id) }

// postingPrefix is the prefix of the postings of term in field.
func postingPrefix(term string, field byte) []byte {
	k := make([]byte, 0, len(prefixIndex)+len(term)+2)
	k = append(k, prefixIndex...)
	k = append(k, term...)
	return append(k, '/', field)
}

// postingKey is the key of the posting of term in field for page id, whose
// rank in that field is rank (see postingRank).
func postingKey(term string, field byte, rank uint16, id string) []byte {
	k := binary.BigEndian.AppendUint16(postingPrefix(term, field), rank)
	return append(k, id...)
}

// postingRank is the rank of a page's postings in field, given the bigram
// counts of its scored fields: the count of that field, capped to 16 bits, or
// 0 for tags, which do not take part in the score.
func postingRank(field byte, counts [3]int) uint16 {
	i := scoredFieldIndex(field)
	if i < 0 {
		return 0
	}
	return uint16(min(counts[i], math.MaxUint16))
}

// scoredFieldIndex is the index of field in docRecord order (title, summary,
// content), or -1 for tags.
func scoredFieldIndex(field byte) int {
	switch field {
	case fieldTitle:
		return 0
	case fieldSummary:
		return 1
	case fieldContent:
		return 2
	}
	return -1
}

// postingValue encodes the bigram counts of a page's scored fields.
func postingValue(counts [3]int) []byte {
	b := make([]byte, 0, 3*binary.MaxVarintLen32)
	for _, n := range counts {
		b = binary.AppendUvarint(b, uint64(n))
	}
	return b
}

// titlePostingValue is the value of a title posting: postingValue followed
// by the title's bigram set, encoded by encodeBigramSet.
func titlePostingValue(counts [3]int, titleSet []byte) []byte {
	return append(postingValue(counts), titleSet...)
}

// parsePostingValue is the inverse of postingValue and titlePostingValue:
// it returns the counts and what follows them (the title's bigram set in a
// title posting, empty otherwise), which aliases b.
func parsePostingValue(b []byte) ([3]int, []byte, bool) {
	var counts [3]int
	for i := range counts {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > math.MaxInt32 {
			return counts, nil, false
		}
		counts[i] = int(n)
		b = b[k:]
	}
	return counts, b, true
}

// createdKey orders pages by creation time, then id. The time is stored as
// big-endian nanoseconds with the sign bit flipped, so that byte order is
// time order for any time.
func createdKey(created time.Time, id string) []byte {
	k := make([]byte, 0, len(prefixCreated)+8+len(id))
	k = append(k, prefixCreated...)
	k = binary.BigEndian.AppendUint64(k, uint64(created.UnixNano())^(1<<63))
	return append(k, id...)
}

// parseCreatedKey is the inverse of createdKey.
func parseCreatedKey(k []byte) (time.Time, string, bool) {
	rest := k[len(prefixCreated):]
	if len(rest) < 8 {
		return time.Time{}, "", false
	}
	ns := int64(binary.BigEndian.Uint64(rest) ^ (1 << 63))
	return time.Unix(0, ns), string(rest[8:]), true
}
