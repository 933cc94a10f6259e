package cluster

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDecodeRecord_Oversized refuses a value over 16 KiB before decoding
// it, even a well-formed record.
func TestDecodeRecord_Oversized(t *testing.T) {
	v := `{"cluster":"agcore","id":"m1","host":"127.0.0.1","port":7101,"kinds":["session"],"http":"` + strings.Repeat("x", maxRecord) + `"}`
	if _, err := decodeRecord("m1", []byte(v)); !errors.Is(err, errBadRecord) || !strings.Contains(err.Error(), "bytes, over") {
		t.Errorf("decode of a %d-byte record: %v, want errBadRecord for its size", len(v), err)
	}
}

// FuzzDecodeRecord feeds the membership bucket's decoder the values
// anyone who can write the bucket could put there: it never panics, and
// a value it accepts is a usable member record under its own key.
func FuzzDecodeRecord(f *testing.F) {
	f.Add("m1", []byte(`{"cluster":"agcore","id":"m1","host":"127.0.0.1","port":7101,"kinds":["session"],"http":"http://10.0.0.1:8080"}`))
	f.Add("m1", []byte(`{"cluster":"agcore","id":"m2","host":"127.0.0.1","port":7101,"kinds":["session"]}`))
	f.Add("m1", []byte(`{"id":"m1","host":"h","port":70000,"kinds":["session"]}`))
	f.Add("m1", []byte(`{"id":"m1","host":"h","port":1,"kinds":[""]}`))
	f.Add("m1", []byte(`null`))
	f.Add("m1", []byte(`{not json`))
	f.Add("", []byte(`{"id":"","host":"h","port":1,"kinds":["k"]}`))
	f.Fuzz(func(t *testing.T, key string, value []byte) {
		r, err := decodeRecord(key, value)
		if err != nil {
			if !errors.Is(err, errBadRecord) {
				t.Fatalf("error %v does not wrap errBadRecord", err)
			}
			return
		}
		if r.ID != key || r.Host == "" || r.Port <= 0 || r.Port > 65535 || len(r.Kinds) == 0 {
			t.Fatalf("accepted an unusable record %+v under key %q", r, key)
		}
		for _, k := range r.Kinds {
			if k == "" {
				t.Fatalf("accepted an empty kind in %+v", r)
			}
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("accepted record does not encode: %v", err)
		}
	})
}
