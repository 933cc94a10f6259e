package knowledge

import (
	"encoding/binary"
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
//	k/i/<term>/<field><id>       inverted index: one posting per term and field
//
// Ids and tags never contain '/', and terms are made of letters and digits
// only, so a prefix never reaches into a neighbour's keys. The field byte of a
// posting is one of fieldTitle, fieldSummary, fieldTags, fieldContent: the
// postings of a term are grouped by field so that a query reads title matches
// before summary, tag and content matches.
const (
	prefixPage    = memory.PrefixKnowledge + "p/"
	prefixDoc     = memory.PrefixKnowledge + "d/"
	prefixStats   = memory.PrefixKnowledge + "s/"
	prefixCreated = memory.PrefixKnowledge + "c/"
	prefixTag     = memory.PrefixKnowledge + "t/"
	prefixIndex   = memory.PrefixKnowledge + "i/"
)

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

func postingKey(term string, field byte, id string) []byte {
	return append(postingPrefix(term, field), id...)
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
