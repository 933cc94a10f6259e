package knowledge

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// docRecord is what the retriever reads to score a candidate without decoding
// the page: the distinct character bigrams of the normalised (lower-cased)
// title, summary and first MaxScoredContent bytes of content, each set
// encoded by encodeBigramSet, their sizes, and the update time used to break
// ties. Scoring a candidate is a merge of each set with the query's bigrams.
type docRecord struct {
	updated time.Time
	sets    [3][]byte // title, summary, content prefix: encoded bigram sets
	bigrams [3]int    // distinct bigrams of each field
}

// docRecordVersion is the first byte of an encoded docRecord.
const docRecordVersion = 2

// newDocRecord builds the scoring record of p.
func newDocRecord(p *Page) docRecord {
	d := docRecord{updated: p.Updated}
	for i, t := range scoredFields(p) {
		set := bigramSet(normalize(t))
		d.sets[i] = encodeBigramSet(set)
		d.bigrams[i] = len(set)
	}
	return d
}

// scoredFields are the texts of p that the score compares with a query:
// title, summary and the first MaxScoredContent bytes of content.
func scoredFields(p *Page) [3]string {
	return [3]string{p.Title, p.Summary, cutUTF8(p.Content, MaxScoredContent)}
}

func (d *docRecord) marshal() []byte {
	n := 1 + 8 + 3*2*binary.MaxVarintLen32
	for _, t := range d.sets {
		n += len(t)
	}
	b := make([]byte, 0, n)
	b = append(b, docRecordVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(d.updated.UnixNano()))
	for i, t := range d.sets {
		b = binary.AppendUvarint(b, uint64(d.bigrams[i]))
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
	}
	return b
}

// unmarshalDocRecord decodes a record without copying: the sets alias b.
func unmarshalDocRecord(b []byte) (docRecord, error) {
	var d docRecord
	if len(b) < 9 || b[0] != docRecordVersion {
		return d, fmt.Errorf("%w: scoring record: bad header", ErrCorrupt)
	}
	d.updated = time.Unix(0, int64(binary.BigEndian.Uint64(b[1:9])))
	b = b[9:]
	for i := range d.sets {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > math.MaxInt32 {
			return d, fmt.Errorf("%w: scoring record: bad bigram count", ErrCorrupt)
		}
		b = b[k:]
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return d, fmt.Errorf("%w: scoring record: bad length", ErrCorrupt)
		}
		b = b[k:]
		d.bigrams[i] = int(n)
		d.sets[i] = b[:l:l]
		b = b[l:]
	}
	return d, nil
}

// recallStats counts how often a page was returned by a query, for the
// access count and for recall-based eviction.
type recallStats struct {
	recalls    int64
	totalScore float64   // sum of the scores of those recalls
	lastRecall time.Time // zero when never recalled
}

const recallStatsVersion = 1

// avgScore is the mean score over all recalls, 0 when never recalled.
func (s recallStats) avgScore() float64 {
	if s.recalls == 0 {
		return 0
	}
	return s.totalScore / float64(s.recalls)
}

func (s recallStats) marshal() []byte {
	b := make([]byte, 0, 25)
	b = append(b, recallStatsVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(s.recalls))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(s.totalScore))
	var last int64
	if !s.lastRecall.IsZero() {
		last = s.lastRecall.UnixNano()
	}
	return binary.BigEndian.AppendUint64(b, uint64(last))
}

func unmarshalRecallStats(b []byte) (recallStats, error) {
	if len(b) != 25 || b[0] != recallStatsVersion {
		return recallStats{}, fmt.Errorf("%w: recall statistics", ErrCorrupt)
	}
	s := recallStats{
		recalls:    int64(binary.BigEndian.Uint64(b[1:])),
		totalScore: math.Float64frombits(binary.BigEndian.Uint64(b[9:])),
	}
	if last := int64(binary.BigEndian.Uint64(b[17:])); last != 0 {
		s.lastRecall = time.Unix(0, last)
	}
	return s, nil
}
