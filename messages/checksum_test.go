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
