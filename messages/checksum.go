package messages

import (
	"bytes"
	"encoding/hex"
	"hash/crc32"
	"slices"
)

// The stored form of a version 2 envelope ends with its checksum member:
//
//	{"v":2,"seq":7,"type":"user_message","at":"...","data":{...},"crc":"1a2b3c4d"}
//
// The checksum is the CRC-32C (Castagnoli) of every byte before the comma
// that opens the member, as 8 lower-case hex digits. It covers the bytes as
// stored, so verifying it needs no re-encoding.
const (
	crcPrefix = `,"crc":"`
	crcSuffix = `"}`
	// crcTrailerLen is the length of the checksum member and the closing
	// brace.
	crcTrailerLen = len(crcPrefix) + 8 + len(crcSuffix)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum returns the CRC-32C of b.
func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// appendChecksum turns the JSON object b into its stored form, in place
// when b has room: the object without its closing brace, the checksum
// member, the brace.
func appendChecksum(b []byte) []byte {
	body := b[:len(b)-1] // b ends with '}'
	sum := checksum(body)
	out := slices.Grow(body, crcTrailerLen)
	out = append(out, crcPrefix...)
	out = hex.AppendEncode(out, []byte{byte(sum >> 24), byte(sum >> 16), byte(sum >> 8), byte(sum)})
	return append(out, crcSuffix...)
}

// splitChecksum splits a stored envelope into the bytes its checksum covers
// and the checksum. ok is false when b does not end with a well-formed
// checksum member.
func splitChecksum(b []byte) (body []byte, sum uint32, ok bool) {
	if len(b) < crcTrailerLen+1 {
		return nil, 0, false
	}
	cut := len(b) - crcTrailerLen
	trailer := b[cut:]
	if !bytes.HasPrefix(trailer, []byte(crcPrefix)) || !bytes.HasSuffix(trailer, []byte(crcSuffix)) {
		return nil, 0, false
	}
	var sum32 uint32
	for _, c := range trailer[len(crcPrefix) : len(crcPrefix)+8] {
		switch {
		case c >= '0' && c <= '9':
			sum32 = sum32<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			sum32 = sum32<<4 | uint32(c-'a'+10)
		default:
			return nil, 0, false // only lower-case hex digits are written
		}
	}
	return b[:cut], sum32, true
}
