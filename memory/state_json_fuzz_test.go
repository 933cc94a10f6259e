package memory_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/agcore/agcore/memory"
)

// FuzzStateJSON decodes arbitrary bytes as a State, as a snapshot is
// decoded: whatever decodes encodes, decodes again to the same turn index,
// and encodes again to the same bytes, so a snapshot taken of a loaded
// state holds what the state held.
func FuzzStateJSON(f *testing.F) {
	stored, err := os.ReadFile("testdata/state-two-turn-maps.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(stored)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"seq":3,"turn":1,"turn_ids":{"x":0}}`))
	f.Add([]byte(`{"seq":3,"turn_seqs":{"x":2}}`))
	f.Add([]byte(`{"turn_ids":{"a":1,"b":2},"turn_seqs":{"a":9,"c":4},"history":[{"role":"user","content":"hi"}],"history_seq":[1]}`))
	f.Add([]byte(`{"turn_ids":null,"turn_seqs":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var st memory.State
		if err := json.Unmarshal(b, &st); err != nil {
			return
		}
		first, err := json.Marshal(&st)
		if err != nil {
			t.Fatalf("a decoded state does not encode: %v", err)
		}
		var again memory.State
		if err := json.Unmarshal(first, &again); err != nil {
			t.Fatalf("an encoded state does not decode: %v\n%s", err, first)
		}
		if len(again.TurnIDs) != len(st.TurnIDs) {
			t.Fatalf("turn index of %d ids came back with %d", len(st.TurnIDs), len(again.TurnIDs))
		}
		for id, ref := range st.TurnIDs {
			if got, ok := again.TurnIDs[id]; !ok || got != ref {
				t.Fatalf("TurnIDs[%q] = %+v, %v after a round trip; want %+v", id, got, ok, ref)
			}
		}
		second, err := json.Marshal(&again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("encoding is not stable:\n%s\n%s", first, second)
		}
	})
}
