package openai

// This file holds the fast decoder of streamed chunks: a reply arrives as
// one small JSON object per SSE event, and decoding them with reflection
// cost more than reading them. decodeChunk reads the usual shape by hand
// and hands anything else back to encoding/json, so that the result is
// always what encoding/json would have produced.

import (
	"bytes"
	"math/bits"
	"unicode/utf8"

	oai "github.com/sashabaranov/go-openai"
)

// maxChunkDepth bounds the nesting decodeChunk follows in members it skips;
// deeper input goes to encoding/json.
const maxChunkDepth = 32

// maxIntDigits is the number of digits an int always holds.
const maxIntDigits = 18*(bits.UintSize/64) + 9*(1-bits.UintSize/64)

// decodeChunk decodes payload into w, which must be the zero wireChunk
// (but for the capacity of w.Choices), and
// reports whether it could. It accepts only input that encoding/json
// decodes without error and only when the result is the same: strict JSON
// with members spelled exactly as the wire format spells them, each at most
// once, of the expected types, with valid UTF-8 and no surrogate escapes.
// When it reports false, w is left in an unspecified state and the caller
// decodes payload with encoding/json instead.
//
// The chunks of one reply repeat their id and model: seen holds the last
// ones, and a chunk that repeats them shares their strings. w.Choices may
// hold a backing array to reuse.
func decodeChunk(payload []byte, w *wireChunk, seen *chunkStrings) bool {
	d := chunkDecoder{b: payload}
	d.ws()
	ok := d.object(chunkKeys, func(k int) bool {
		switch k {
		case 0:
			return d.stringSeen(&w.ID, &seen.id)
		case 1:
			return d.stringSeen(&w.Model, &seen.model)
		case 2:
			return d.choices(&w.Choices)
		case 3:
			return d.usage(w)
		default:
			// An error event goes to encoding/json, which keeps it
			// as it came; null is no error.
			return d.null()
		}
	})
	d.ws()
	return ok && d.i == len(d.b)
}

// The members decodeChunk reads, in the order their index names them.
var (
	chunkKeys    = []string{"id", "model", "choices", "usage", "error"}
	choiceKeys   = []string{"index", "delta", "finish_reason"}
	deltaKeys    = []string{"content", "tool_calls"}
	toolCallKeys = []string{"index", "id", "function"}
	functionKeys = []string{"name", "arguments"}
	usageKeys    = []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details"}
	promptKeys   = []string{"audio_tokens", "cached_tokens"}
	replyKeys    = []string{"audio_tokens", "reasoning_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens"}
)

// chunkDecoder reads JSON from b at i. Each method reports false for input
// it does not take, which sends the whole payload to encoding/json.
type chunkDecoder struct {
	b []byte
	i int
}

func (d *chunkDecoder) choices(out *[]wireChoice) bool {
	if d.null() {
		*out = (*out)[:0]
		return true
	}
	return d.array(func() bool {
		*out = append(*out, wireChoice{})
		ch := &(*out)[len(*out)-1]
		return d.object(choiceKeys, func(k int) bool {
			switch k {
			case 0:
				return d.nullOr(func() bool { return d.intInto(&ch.Index) })
			case 1:
				return d.nullOr(func() bool {
					return d.object(deltaKeys, func(k int) bool {
						if k == 0 {
							return d.stringInto(&ch.Delta.Content)
						}
						return d.toolCalls(&ch.Delta.ToolCalls)
					})
				})
			default:
				var s string
				ok := d.stringInto(&s)
				ch.FinishReason = oai.FinishReason(s)
				return ok
			}
		})
	})
}

func (d *chunkDecoder) toolCalls(out *[]wireToolCall) bool {
	if d.null() {
		*out = nil
		return true
	}
	return d.array(func() bool {
		*out = append(*out, wireToolCall{})
		tc := &(*out)[len(*out)-1]
		return d.object(toolCallKeys, func(k int) bool {
			switch k {
			case 0:
				if d.null() {
					tc.Index = nil
					return true
				}
				idx := new(int)
				tc.Index = idx
				return d.intInto(idx)
			case 1:
				return d.stringInto(&tc.ID)
			default:
				return d.nullOr(func() bool {
					return d.object(functionKeys, func(k int) bool {
						if k == 0 {
							return d.stringInto(&tc.Function.Name)
						}
						return d.stringInto(&tc.Function.Arguments)
					})
				})
			}
		})
	})
}

// usage reads the chunk's usage into the room w keeps for it.
func (d *chunkDecoder) usage(w *wireChunk) bool {
	if d.null() {
		w.Usage = nil
		return true
	}
	u := &w.room.usage
	w.Usage = u
	return d.object(usageKeys, func(k int) bool {
		switch k {
		case 0:
			return d.nullOr(func() bool { return d.intInto(&u.PromptTokens) })
		case 1:
			return d.nullOr(func() bool { return d.intInto(&u.CompletionTokens) })
		case 2:
			return d.nullOr(func() bool { return d.intInto(&u.TotalTokens) })
		case 3:
			if d.null() {
				u.PromptTokensDetails = nil
				return true
			}
			p := &w.room.prompt
			u.PromptTokensDetails = p
			return d.object(promptKeys, func(k int) bool {
				return d.nullOr(func() bool { return d.intInto([]*int{&p.AudioTokens, &p.CachedTokens}[k]) })
			})
		default:
			if d.null() {
				u.CompletionTokensDetails = nil
				return true
			}
			c := &w.room.reply
			u.CompletionTokensDetails = c
			fields := []*int{&c.AudioTokens, &c.ReasoningTokens, &c.AcceptedPredictionTokens, &c.RejectedPredictionTokens}
			return d.object(replyKeys, func(k int) bool {
				return d.nullOr(func() bool { return d.intInto(fields[k]) })
			})
		}
	})
}

// object reads an object whose members named in keys are handed to member
// (with their index in keys) and whose other members are skipped. A
// member named twice, a key with an escape or a byte outside ASCII, and an
// unknown key that matches one of keys but for case (which encoding/json
// would take) are refused.
func (d *chunkDecoder) object(keys []string, member func(int) bool) bool {
	if !d.eat('{') {
		return false
	}
	d.ws()
	if d.eat('}') {
		return true
	}
	var seen uint64
	for {
		key, ok := d.key()
		if !ok {
			return false
		}
		d.ws()
		if !d.eat(':') {
			return false
		}
		d.ws()
		k := indexOf(keys, key)
		switch {
		case k >= 0:
			if seen&(1<<k) != 0 {
				return false
			}
			seen |= 1 << k
			if !member(k) {
				return false
			}
		case foldsToOneOf(keys, key):
			return false
		default:
			if !d.skip(0) {
				return false
			}
		}
		d.ws()
		if d.eat('}') {
			return true
		}
		if !d.eat(',') {
			return false
		}
		d.ws()
	}
}

// array reads an array, handing each element to elem.
func (d *chunkDecoder) array(elem func() bool) bool {
	if !d.eat('[') {
		return false
	}
	d.ws()
	if d.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		d.ws()
		if d.eat(']') {
			return true
		}
		if !d.eat(',') {
			return false
		}
		d.ws()
	}
}

// key reads an object key made of printable ASCII without escapes. The
// key is a view of the payload.
func (d *chunkDecoder) key() ([]byte, bool) {
	if !d.eat('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
		d.i++
	}
	return nil, false
}

func indexOf(keys []string, key []byte) int {
	for i, k := range keys {
		if k == string(key) {
			return i
		}
	}
	return -1
}

func foldsToOneOf(keys []string, key []byte) bool {
	for _, k := range keys {
		if bytes.EqualFold([]byte(k), key) {
			return true
		}
	}
	return false
}

// nullOr reads null, leaving its target as it is (as encoding/json does
// for a string or a number), or else runs read.
func (d *chunkDecoder) nullOr(read func() bool) bool {
	return d.null() || read()
}

// chunkStrings are the id and model of the last chunk of a reply.
type chunkStrings struct{ id, model string }

// stringSeen is stringInto, which gives *s the string *last when it reads
// the same bytes, and makes what it read the new *last.
func (d *chunkDecoder) stringSeen(s, last *string) bool {
	if d.null() {
		return true
	}
	raw, escapes, ok := d.scanStr()
	switch {
	case !ok:
		return false
	case escapes:
		*s = unescape(raw)
	case string(raw) == *last:
		*s = *last
	default:
		*s = string(raw)
	}
	*last = *s
	return true
}

// stringInto reads a string, or null, which leaves *s as it is.
func (d *chunkDecoder) stringInto(s *string) bool {
	if d.null() {
		return true
	}
	v, ok := d.str()
	*s = v
	return ok
}

// str reads a string and decodes its escapes.
func (d *chunkDecoder) str() (string, bool) {
	raw, escapes, ok := d.scanStr()
	switch {
	case !ok:
		return "", false
	case !escapes:
		return string(raw), true
	}
	return unescape(raw), true
}

// scanStr reads a string and returns its bytes between the quotes as a view
// of the payload, and whether they hold escapes. A surrogate escape, a
// control character and invalid UTF-8 are refused (encoding/json replaces
// the last two kinds rather than failing, and decodeChunk leaves that to
// it), so the decoded string is valid UTF-8.
func (d *chunkDecoder) scanStr() (raw []byte, escapes, ok bool) {
	if !d.eat('"') {
		return nil, false, false
	}
	start, ascii := d.i, true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			raw = d.b[start:d.i]
			d.i++
			return raw, escapes, ascii || utf8.Valid(raw)
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return nil, false, false
			}
			escapes = true
			switch d.b[d.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i += 2
			case 'u':
				r, ok := hex4(d.b[d.i+2:])
				if !ok || utf8.RuneLen(r) < 0 { // a surrogate
					return nil, false, false
				}
				d.i += 6
			default:
				return nil, false, false
			}
			continue
		case c < 0x20:
			return nil, false, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		d.i++
	}
	return nil, false, false
}

// unescape decodes the escapes of raw, which scanStr accepted.
func unescape(raw []byte) string {
	buf := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			buf = append(buf, c)
			continue
		}
		i++
		switch e := raw[i]; e {
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, _ := hex4(raw[i+1:])
			buf = utf8.AppendRune(buf, r)
			i += 4
		default: // '"', '\\' or '/'
			buf = append(buf, e)
		}
	}
	return string(buf)
}

// hex4 reads the four hex digits of a \u escape at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// intInto reads an integer of at most maxIntDigits digits, without a fraction or an
// exponent (which encoding/json refuses for an int).
func (d *chunkDecoder) intInto(n *int) bool {
	neg := d.eat('-')
	start := d.i
	v := 0
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		v = v*10 + int(d.b[d.i]-'0')
		d.i++
	}
	digits := d.i - start
	if digits == 0 || digits > maxIntDigits || digits > 1 && d.b[start] == '0' {
		return false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return false
	}
	if neg {
		v = -v
	}
	*n = v
	return true
}

// skip reads any JSON value, checking it is well formed.
func (d *chunkDecoder) skip(depth int) bool {
	if depth > maxChunkDepth || d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		d.i++
		d.ws()
		if d.eat('}') {
			return true
		}
		for {
			if _, _, ok := d.scanStr(); !ok {
				return false
			}
			d.ws()
			if !d.eat(':') {
				return false
			}
			d.ws()
			if !d.skip(depth + 1) {
				return false
			}
			d.ws()
			if d.eat('}') {
				return true
			}
			if !d.eat(',') {
				return false
			}
			d.ws()
		}
	case c == '[':
		return d.array(func() bool { return d.skip(depth + 1) })
	case c == '"':
		_, _, ok := d.scanStr()
		return ok
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	default:
		return d.number()
	}
}

// literal reads lit.
func (d *chunkDecoder) literal(lit string) bool {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

// number reads a JSON number.
func (d *chunkDecoder) number() bool {
	d.eat('-')
	switch {
	case d.eat('0'):
	case d.digits() == 0:
		return false
	}
	if d.eat('.') && d.digits() == 0 {
		return false
	}
	if d.eat('e') || d.eat('E') {
		if !d.eat('+') {
			d.eat('-')
		}
		if d.digits() == 0 {
			return false
		}
	}
	return true
}

func (d *chunkDecoder) digits() int {
	start := d.i
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i - start
}

// null reads null if it comes next.
func (d *chunkDecoder) null() bool {
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// eat reads c if it comes next.
func (d *chunkDecoder) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// ws skips JSON whitespace.
func (d *chunkDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}
