package jetstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// A record is what one Append (or Activate) stores: one NATS message on
// the session's entry subject, so that an append is all-or-nothing. Its
// headers say which entries it holds and the session's activation after
// it; its body is the entries' envelopes, each exactly as the Badger
// journal stores it (messages.Envelope.EncodeTrusted: versioned JSON with a
// CRC-32C), each preceded by its length as a uvarint.
const (
	hdrFormat     = "Agcore-Record"     // recordFormat
	hdrFirst      = "Agcore-First"      // seq of the first entry
	hdrLast       = "Agcore-Last"       // seq of the last entry
	hdrActivation = "Agcore-Activation" // the session's activation after this record
	hdrSnapSeq    = "Agcore-Seq"        // a snapshot's State.Seq
	hdrSnapAnchor = "Agcore-Anchor"     // stream seq of the record that ends at a snapshot's seq

	recordFormat = "1"
)

// maxRecordEntries bounds the entries one record may claim, so that a
// damaged header cannot make a reader allocate without limit.
const maxRecordEntries = memory.MaxAppendBytes

// record is a decoded record: its header fields and its frames, each the
// stored bytes of one entry, not yet decoded.
type record struct {
	first, last uint64
	activation  uint64
	frames      [][]byte
}

// errRecord marks a record whose header or framing cannot be read.
var errRecord = errors.New("unreadable record")

// encodeRecord builds the message for entries first.. with the given
// stored envelopes.
func encodeRecord(subject string, first, activation uint64, envs [][]byte) *nats.Msg {
	size := 0
	for _, e := range envs {
		size += binary.MaxVarintLen64 + len(e)
	}
	body := make([]byte, 0, size)
	for _, e := range envs {
		body = binary.AppendUvarint(body, uint64(len(e)))
		body = append(body, e...)
	}
	m := nats.NewMsg(subject)
	m.Header.Set(hdrFormat, recordFormat)
	m.Header.Set(hdrFirst, strconv.FormatUint(first, 10))
	m.Header.Set(hdrLast, strconv.FormatUint(first+uint64(len(envs))-1, 10))
	m.Header.Set(hdrActivation, strconv.FormatUint(activation, 10))
	m.Data = body
	return m
}

// decodeHeader reads a record's header fields.
func decodeHeader(h nats.Header) (first, last, activation uint64, err error) {
	if f := h.Get(hdrFormat); f != recordFormat {
		return 0, 0, 0, fmt.Errorf("%w: format %q, this build reads %q", errRecord, f, recordFormat)
	}
	num := func(name string) uint64 {
		if err != nil {
			return 0
		}
		var n uint64
		n, err = strconv.ParseUint(h.Get(name), 10, 64)
		if err != nil {
			err = fmt.Errorf("%w: header %s: %w", errRecord, name, err)
		}
		return n
	}
	first, last, activation = num(hdrFirst), num(hdrLast), num(hdrActivation)
	if err != nil {
		return 0, 0, 0, err
	}
	if first == 0 || last < first || last-first >= maxRecordEntries {
		return 0, 0, 0, fmt.Errorf("%w: entries %d to %d", errRecord, first, last)
	}
	return first, last, activation, nil
}

// decodeRecord reads a stored record: its header and its frames. The
// frames are not decoded; a frame whose length runs past the body ends the
// frames read (the caller reports the entries missing).
func decodeRecord(h nats.Header, body []byte) (record, error) {
	first, last, act, err := decodeHeader(h)
	if err != nil {
		return record{}, err
	}
	r := record{first: first, last: last, activation: act}
	for len(body) > 0 {
		n, k := binary.Uvarint(body)
		if k <= 0 || n > uint64(len(body)-k) {
			return r, fmt.Errorf("%w: frame %d runs past the record's end", errRecord, len(r.frames)+1)
		}
		r.frames = append(r.frames, body[k:k+int(n)])
		body = body[k+int(n):]
	}
	if uint64(len(r.frames)) != last-first+1 {
		return r, fmt.Errorf("%w: %d entries stored, the header says %d", errRecord, len(r.frames), last-first+1)
	}
	return r, nil
}

// decodeEntry verifies and decodes a stored entry, classifying failures as
// the Badger journal does: a *memory.CorruptError for damage, a
// *memory.EntryError for an entry written by a newer version.
func decodeEntry(session string, seq uint64, b []byte) (messages.Envelope, messages.JournalEvent, error) {
	env, ev, err := messages.DecodeEnvelope(seq, b)
	switch {
	case err == nil:
		return env, ev, nil
	case errors.Is(err, messages.ErrChecksum):
		return env, nil, &memory.CorruptError{Session: session, Seq: seq, Problem: "checksum mismatch", Err: err}
	case errors.Is(err, messages.ErrCorrupt) && len(b) == 0:
		return env, nil, &memory.CorruptError{Session: session, Seq: seq, Problem: "empty entry", Err: err}
	case errors.Is(err, messages.ErrCorrupt):
		return env, nil, &memory.CorruptError{Session: session, Seq: seq, Problem: "undecodable entry", Err: err}
	}
	return env, nil, &memory.EntryError{Session: session, Seq: seq, Err: err}
}
