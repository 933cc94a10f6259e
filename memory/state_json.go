package memory

import "encoding/json"

// stateFields is State without its methods, so that State's JSON methods
// can encode the rest of its fields as encoding/json would.
type stateFields State

// stateJSON is the JSON form of a State: its fields, with the turn index
// as the two maps snapshots have always stored, "turn_ids" and
// "turn_seqs". Keeping that form lets a snapshot written before TurnIDs
// held both load, and a build that reads the two maps load a snapshot
// written by this one.
type stateJSON struct {
	*stateFields
	TurnIDs  map[string]int    `json:"turn_ids,omitempty"`
	TurnSeqs map[string]uint64 `json:"turn_seqs,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (s State) MarshalJSON() ([]byte, error) {
	w := stateJSON{stateFields: (*stateFields)(&s)}
	if len(s.TurnIDs) > 0 {
		w.TurnIDs = make(map[string]int, len(s.TurnIDs))
		for id, ref := range s.TurnIDs {
			w.TurnIDs[id] = ref.Turn
			if ref.Seq > 0 {
				if w.TurnSeqs == nil {
					w.TurnSeqs = make(map[string]uint64, len(s.TurnIDs))
				}
				w.TurnSeqs[id] = ref.Seq
			}
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON implements json.Unmarshaler. A seq in "turn_seqs" whose id
// is not in "turn_ids" is dropped; an id without a seq gets seq zero.
func (s *State) UnmarshalJSON(b []byte) error {
	w := stateJSON{stateFields: (*stateFields)(s)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	s.TurnIDs = nil
	if len(w.TurnIDs) > 0 {
		s.TurnIDs = make(map[string]TurnRef, len(w.TurnIDs))
		for id, turn := range w.TurnIDs {
			s.TurnIDs[id] = TurnRef{Turn: turn, Seq: w.TurnSeqs[id]}
		}
	}
	return nil
}
