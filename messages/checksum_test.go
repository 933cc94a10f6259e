package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// encodedJournal returns every journal event in its stored form.
func encodedJournal(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for i, ev := range allJournalEvents() {
		env, err := NewEnvelope(uint64(i+1), time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), ev)
		if err != nil {
			t.Fatal(err)
		}
		b, err := env.Encode()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func TestEnvelope_EncodeCarriesChecksum(t *testing.T) {
	for i, b := range encodedJournal(t) {
		seq := uint64(i + 1)
		if !bytes.HasPrefix(b, []byte(`{"v":2,`)) {
			t.Errorf("entry %d does not start as a version 2 envelope: %s", seq, b)
		}
		body, sum, ok := splitChecksum(b)
		if !ok {
			t.Fatalf("entry %d has no checksum member: %s", seq, b)
		}
		if want := checksum(body); sum != want {
			t.Errorf("entry %d stores crc %08x, the CRC-32C of what precedes it is %08x", seq, sum, want)
		}
		if !json.Valid(b) {
			t.Errorf("entry %d is not valid JSON: %s", seq, b)
		}
		env, ev, err := DecodeEnvelope(seq, b)
		if err != nil {
			t.Fatalf("entry %d: %v", seq, err)
		}
		if diff := cmp.Diff(allJournalEvents()[i], ev); diff != "" {
			t.Errorf("entry %d round trip (-want +got):\n%s", seq, diff)
		}
		if env.V != EnvelopeVersion {
			t.Errorf("entry %d decoded as version %d", seq, env.V)
		}
	}
}

// TestEnvelope_EveryBitFlipDetected flips each bit of each stored envelope
// in turn: not one altered entry decodes.
func TestEnvelope_EveryBitFlipDetected(t *testing.T) {
	flips := 0
	for i, b := range encodedJournal(t) {
		seq := uint64(i + 1)
		for pos := range b {
			for bit := range 8 {
				c := bytes.Clone(b)
				c[pos] ^= 1 << bit
				flips++
				_, ev, err := DecodeEnvelope(seq, c)
				if err == nil {
					t.Fatalf("entry %d with bit %d of byte %d flipped decoded as %#v:\n%s", seq, bit, pos, ev, c)
				}
				var de *DecodeError
				if !errors.As(err, &de) || de.Seq != seq {
					t.Fatalf("flip at %d/%d: error %v does not name seq %d", pos, bit, err, seq)
				}
			}
		}
	}
	t.Logf("%d single-bit flips, all rejected", flips)
}

func TestEnvelope_ChecksumErrors(t *testing.T) {
	good := encodedJournal(t)[3] // tool_call_started, seq 4
	altered := bytes.Replace(good, []byte(`secret_ref:K`), []byte(`secret_ref:L`), 1)
	if bytes.Equal(altered, good) {
		t.Fatal("fixture lacks the argument to alter")
	}
	body, _, _ := splitChecksum(good)
	noCRC := append(bytes.Clone(body), '}')
	tests := []struct {
		name string
		b    []byte
		want []error
	}{
		{"altered argument", altered, []error{ErrCorrupt, ErrChecksum}},
		{"version 2 without checksum", noCRC, []error{ErrCorrupt, ErrChecksum}},
		{"checksum not hex", bytes.Replace(good, []byte(`"crc":"`), []byte(`"crc":"z`), 1)[:len(good)], []error{ErrCorrupt}},
		{"truncated", good[:len(good)-3], []error{ErrCorrupt}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := DecodeEnvelope(4, tt.b)
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("DecodeEnvelope = %v, want it to wrap %v", err, want)
				}
			}
			if err != nil && !strings.Contains(err.Error(), "seq 4") {
				t.Errorf("error %q does not name seq 4", err)
			}
		})
	}
}

// TestEnvelope_Version1StillDecodes reads envelopes as version 1 wrote them:
// plain JSON, no checksum.
func TestEnvelope_Version1StillDecodes(t *testing.T) {
	for i, ev := range allJournalEvents() {
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b := fmt.Appendf(nil, `{"v":1,"seq":%d,"type":%q,"at":"2025-01-02T03:04:05Z","data":%s}`, i+1, ev.JournalType(), data)
		env, got, err := DecodeEnvelope(uint64(i+1), b)
		if err != nil {
			t.Fatalf("version 1 %s: %v", ev.JournalType(), err)
		}
		if env.V != 1 {
			t.Errorf("version = %d, want 1", env.V)
		}
		if diff := cmp.Diff(ev, got); diff != "" {
			t.Errorf("version 1 %s (-want +got):\n%s", ev.JournalType(), diff)
		}
	}
}

// TestEnvelope_EncodeAllocatesOnce checks that encoding an envelope
// allocates its stored form and nothing else.
func TestEnvelope_EncodeAllocatesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds allocations of its own")
	}
	for i, ev := range allJournalEvents() {
		env, err := NewEnvelope(uint64(i+1), time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), ev)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(50, func() { _, _ = env.Encode() }); n != 1 {
			t.Errorf("encoding a %s envelope allocates %.0f times, want once", env.Type, n)
		}
		if n := testing.AllocsPerRun(50, func() { _, _ = env.EncodeTrusted() }); n != 1 {
			t.Errorf("EncodeTrusted of a %s envelope allocates %.0f times, want once", env.Type, n)
		}
	}
}

// TestEnvelope_EncodeIsTheJSONEncoding checks that the stored form of an
// envelope is its JSON encoding (as encoding/json writes it) followed by
// the checksum, byte for byte, so that entries written by earlier versions
// and by this one look alike.
func TestEnvelope_EncodeIsTheJSONEncoding(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", 3600)),
		{},
	}
	for i, ev := range allJournalEvents() {
		for _, at := range times {
			env, err := NewEnvelope(uint64(i)*1e9, at, ev)
			if err != nil {
				t.Fatal(err)
			}
			env.At = at // NewEnvelope stores UTC; keep a zone too
			plain, err := json.Marshal(env)
			if err != nil {
				t.Fatal(err)
			}
			got, err := env.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if want := appendChecksum(plain); !bytes.Equal(got, want) {
				t.Errorf("Encode =\n%s\nwant\n%s", got, want)
			}
			if trusted, err := env.EncodeTrusted(); err != nil || !bytes.Equal(trusted, got) {
				t.Errorf("EncodeTrusted = %s, %v; want what Encode gives", trusted, err)
			}
		}
	}
}

// TestEnvelope_EncodeRefuses checks the envelopes Encode refuses, as
// encoding/json does: data that is not one JSON value, and a time whose
// year has more than four digits.
func TestEnvelope_EncodeRefuses(t *testing.T) {
	good, err := NewEnvelope(1, time.Unix(0, 0), UserMessage{Message: UserText("x")})
	if err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string]Envelope{
		"truncated data": {V: 2, Seq: 1, Type: good.Type, At: good.At, Data: good.Data[:len(good.Data)-1]},
		"two values":     {V: 2, Seq: 1, Type: good.Type, At: good.At, Data: json.RawMessage(`{} {}`)},
		"year 10000":     {V: 2, Seq: 1, Type: good.Type, At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Data: good.Data},
	} {
		if b, err := env.Encode(); err == nil {
			t.Errorf("%s: Encode = %s, want an error", name, b)
		}
	}
}

// FuzzEnvelopeEncode encodes envelopes of any type, data and time, and
// holds Encode to encoding/json: it fails exactly when json.Marshal does;
// otherwise its result is JSON that DecodeEnvelope reads back to the same
// header and data, and it is json.Marshal's bytes (and the checksum)
// whenever Data is as json.Marshal would write it.
func FuzzEnvelopeEncode(f *testing.F) {
	f.Add(uint64(7), "user_message", []byte(`{"turn":0,"message":{"role":"user","content":"hi"}}`), int64(1767322245000000006), 0)
	f.Add(uint64(1), "tool_result", []byte(`{"content":"a <b> & c","call_id":"x"}`), int64(0), 60)
	f.Add(uint64(0), "weird \"type\" <>&\x00", []byte(` [1, 2.5e3, "\u00e9", null, true] `), int64(-62135596800000000000/1000), -120)
	f.Add(uint64(1<<63), "", []byte(`{"a":`), int64(253402300800000000000/1000), 0)
	f.Add(uint64(3), "x", []byte(``), int64(1), 1)
	f.Fuzz(func(t *testing.T, seq uint64, typ string, data []byte, nanos int64, offset int) {
		// RFC 3339 offsets are whole minutes (time drops the seconds).
		at := time.Unix(0, nanos).In(time.FixedZone("z", offset%(24*60)*60))
		if len(data) == 0 {
			data = nil // encoding/json refuses an empty RawMessage that is not nil; Encode writes null
		}
		env := Envelope{V: EnvelopeVersion, Seq: seq, Type: typ, At: at, Data: json.RawMessage(data)}
		plain, jerr := json.Marshal(env)
		got, err := env.Encode()
		if (err == nil) != (jerr == nil) {
			t.Fatalf("Encode error %v, json.Marshal error %v", err, jerr)
		}
		if err != nil {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("Encode gave invalid JSON: %s", got)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, data)
		if bytes.Equal(compact.Bytes(), bytes.TrimSpace(data)) && !bytes.ContainsAny(data, "<>&") &&
			!bytes.Contains(data, []byte("\u2028")) && !bytes.Contains(data, []byte("\u2029")) {
			if want := appendChecksum(plain); !bytes.Equal(got, want) {
				t.Fatalf("Encode =\n%s\njson.Marshal and checksum =\n%s", got, want)
			}
		}
		// The event may be of an unknown type, or not fit its type; the
		// envelope itself must read back.
		back, _, derr := DecodeEnvelope(seq, got)
		if errors.Is(derr, ErrChecksum) {
			t.Fatalf("DecodeEnvelope(%s): %v", got, derr)
		}
		var wantType string // JSON replaces invalid UTF-8
		quoted, _ := json.Marshal(typ)
		_ = json.Unmarshal(quoted, &wantType)
		if back.V != env.V || back.Seq != seq || back.Type != wantType || !back.At.Equal(at) {
			t.Fatalf("header read back as %+v from %s", back, got)
		}
		var want, have bytes.Buffer
		if data == nil {
			data = []byte("null")
		}
		_ = json.Compact(&want, data)
		_ = json.Compact(&have, back.Data)
		if !bytes.Equal(want.Bytes(), have.Bytes()) {
			t.Fatalf("data read back as %s, want %s", have.Bytes(), want.Bytes())
		}
	})
}
