package jetstream

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// FuzzDecodeRecord decodes stored records with arbitrary headers and
// bodies, as a damaged or hostile stream would hold them: decoding never
// panics, a record it accepts holds exactly the entries its header claims,
// and every entry that fails is a *memory.CorruptError or a
// *memory.EntryError at its own seq.
func FuzzDecodeRecord(f *testing.F) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var frames [][]byte
	for i, ev := range []messages.JournalEvent{
		messages.Activated{Activation: 1, Node: "n"},
		messages.UserMessage{Message: messages.UserText("hi")},
		messages.ToolCallStarted{CallID: "c", Name: "bash", Arguments: `{"command":"ls"}`},
	} {
		env, err := messages.NewEnvelope(uint64(i+1), at, ev)
		if err != nil {
			f.Fatal(err)
		}
		b, err := env.EncodeTrusted()
		if err != nil {
			f.Fatal(err)
		}
		frames = append(frames, b)
	}
	good := encodeRecord("x", 1, 1, frames)
	f.Add(recordFormat, "1", "3", "1", good.Data)
	f.Add(recordFormat, "1", "1", "1", encodeRecord("x", 1, 1, frames[:1]).Data)
	f.Add(recordFormat, "1", "3", "1", good.Data[:len(good.Data)-5])
	f.Add(recordFormat, "2", "2", "0", binary.AppendUvarint(nil, 1<<40))
	f.Add(recordFormat, "1", "18446744073709551615", "1", []byte{})
	f.Add("2", "1", "1", "1", frames[0])
	f.Add(recordFormat, "-1", "x", "", []byte{0x80, 0x80, 0x80})
	f.Fuzz(func(t *testing.T, format, first, last, act string, body []byte) {
		h := nats.Header{}
		h.Set(hdrFormat, format)
		h.Set(hdrFirst, first)
		h.Set(hdrLast, last)
		h.Set(hdrActivation, act)
		r, err := decodeRecord(h, body)
		if err != nil {
			if !errors.Is(err, errRecord) {
				t.Fatalf("decodeRecord error %v does not wrap errRecord", err)
			}
		} else if uint64(len(r.frames)) != r.last-r.first+1 {
			t.Fatalf("accepted a record of %d frames for entries %d to %d", len(r.frames), r.first, r.last)
		}
		for i, fr := range r.frames {
			seq := r.first + uint64(i)
			env, ev, err := decodeEntry("s", seq, fr)
			if err == nil {
				if env.Seq != seq || ev == nil {
					t.Fatalf("entry %d decoded as seq %d, event %v", seq, env.Seq, ev)
				}
				continue
			}
			ce, isCorrupt := errors.AsType[*memory.CorruptError](err)
			ee, isEntry := errors.AsType[*memory.EntryError](err)
			switch {
			case isCorrupt && ce.Seq == seq, isEntry && ee.Seq == seq:
			default:
				t.Fatalf("entry %d: error %v is neither a CorruptError nor an EntryError at its seq", seq, err)
			}
		}
	})
}
