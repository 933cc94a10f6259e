package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Encode returns the stored form of the envelope: its JSON encoding, whose
// last member, "crc", holds the CRC-32C (Castagnoli) of every byte before
// that member as 8 hex digits. DecodeEnvelope verifies it.
//
// The members are written in the order of the Envelope's fields, as
// encoding/json writes them, without going through reflection: Data is
// checked to be one JSON value and copied as it is (without the white
// space around it), so for Data as NewEnvelope makes it the bytes are those
// of json.Marshal followed by the checksum. Encode fails when Data is not
// one JSON value or the time's year is outside 0 to 9999. The result is
// allocated once, at its final size.
func (e Envelope) Encode() ([]byte, error) {
	if len(e.Data) > 0 && !json.Valid(e.Data) {
		return nil, e.encodeErr(errors.New("data is not one JSON value"))
	}
	return e.encode()
}

// EncodeTrusted is Encode for an envelope whose Data is known to be one
// JSON value, such as the Data of NewEnvelope: it does not check Data
// again, which is most of what Encode costs. Data that is not JSON makes an
// entry that DecodeEnvelope refuses as corrupt.
func (e Envelope) EncodeTrusted() ([]byte, error) { return e.encode() }

// encode writes the stored form with Data as it is.
func (e Envelope) encode() ([]byte, error) {
	data := bytes.TrimSpace(e.Data)
	if len(data) == 0 {
		data = []byte("null")
	}
	out := make([]byte, 0, e.storedSize(len(data)))
	out = append(out, `{"v":`...)
	out = strconv.AppendInt(out, int64(e.V), 10)
	out = append(out, `,"seq":`...)
	out = strconv.AppendUint(out, e.Seq, 10)
	out = append(out, `,"type":`...)
	out = appendJSONString(out, e.Type)
	out = append(out, `,"at":"`...)
	out, err := e.At.AppendText(out)
	if err != nil {
		return nil, e.encodeErr(err)
	}
	out = append(out, `","data":`...)
	out = append(out, data...)
	return appendChecksum(append(out, '}')), nil
}

// storedSize is an upper bound of the length of the stored form with data
// of n bytes when the type needs no escaping: the members' names and
// punctuation, the numbers, the longest RFC 3339 time, the data and the
// checksum member.
func (e Envelope) storedSize(n int) int {
	const fixed = len(`{"v":,"seq":,"type":"","at":"","data":}`) + 20 + 20 + len("-0000-00-00T00:00:00.000000000+00:00") + crcTrailerLen
	return fixed + len(e.Type) + n
}

func (e Envelope) encodeErr(err error) error {
	return fmt.Errorf("journal entry seq %d (type %q): encode: %w", e.Seq, e.Type, err)
}

// appendJSONString appends s as a JSON string, as encoding/json writes it.
func appendJSONString(dst []byte, s string) []byte { return AppendJSONString(dst, s) }
