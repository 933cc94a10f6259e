package toolsys

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type planMode string

// flatParams has a field of every flat kind a docPlan decodes.
type flatParams struct {
	S    string        `json:"s"`
	I    int           `json:"i,omitempty"`
	I8   int8          `json:"i8,omitempty"`
	U    uint16        `json:"u,omitempty"`
	F    float32       `json:"f,omitempty"`
	B    bool          `json:"b,omitempty"`
	P    *int          `json:"p,omitempty"`
	L    []string      `json:"l,omitempty"`
	N    []int64       `json:"n,omitempty"`
	A    any           `json:"a,omitempty"`
	M    planMode      `json:"m,omitempty" jsonschema:"enum=fast,enum=slow"`
	D    time.Duration `json:"d,omitempty"`
	Skip string        `json:"-"`
	Go   string        `json:",omitempty"`
}

// referenceDecode is Decoder.Decode as it was before docPlan: the
// validated arguments are always decoded from their JSON.
func referenceDecode[T any](d *Decoder[T], raw json.RawMessage) (T, error) {
	var p T
	doc, err := parseArguments(raw)
	if err != nil {
		return p, err
	}
	if stripEmpty(doc, d.required) {
		if raw, err = marshalSorted(doc); err != nil {
			return p, err
		}
	}
	if err := d.validator.validateDoc(doc); err != nil {
		return p, err
	}
	return d.fromJSON(raw)
}

func TestNewDocPlan_FlatTypesOnly(t *testing.T) {
	type embedded struct{ X int }
	tests := []struct {
		name string
		typ  reflect.Type
		flat bool
	}{
		{"every flat kind", reflect.TypeFor[flatParams](), true},
		{"pointer to flat struct", reflect.TypeFor[*flatParams](), true},
		{"nested struct", reflect.TypeFor[struct{ In struct{ X int } }](), false},
		{"slice of structs", reflect.TypeFor[struct{ L []struct{ X int } }](), false},
		{"map", reflect.TypeFor[struct{ M map[string]int }](), false},
		{"bytes", reflect.TypeFor[struct{ B []byte }](), false},
		{"embedded", reflect.TypeFor[struct{ embedded }](), false},
		{"custom decoding", reflect.TypeFor[struct{ T time.Time }](), false},
		{"json.Number", reflect.TypeFor[struct{ N json.Number }](), false},
		{"string option", reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](), false},
		{"unusual name", reflect.TypeFor[struct {
			N int `json:"a.b"`
		}](), false},
		{"two fields, one name", reflect.TypeFor[struct {
			A int `json:"B"`
			B int
		}](), false},
	}
	for _, tt := range tests {
		if got := newDocPlan(tt.typ) != nil; got != tt.flat {
			t.Errorf("%s: plan %v, want %v", tt.name, got, tt.flat)
		}
	}
}

// decodeSeeds are arguments where a shortcut could go wrong: duplicate
// keys, numbers that do not fit, nulls, case-folded and escaped keys.
var decodeSeeds = []string{
	`{"s":"x","i":3,"i8":-4,"u":5,"f":1.5,"b":true,"p":7,"l":["a","b"],"n":[1,2],"a":{"k":[1,2.5,"z",null,{"q":1e3}]},"m":"fast","d":1000,"Go":"g"}`,
	`{"s":"x","i":"no","i":1}`,
	`{"s":"x","i":1,"i":null}`,
	`{"s":"x","l":["y"],"l":[2]}`,
	`{"s":"x","i8":300}`,
	`{"s":"x","i":1.5}`,
	`{"s":"x","i":1e2}`,
	`{"s":"x","u":-1}`,
	`{"s":"x","f":3.5e39}`,
	`{"s":"x","a":1e400}`,
	`{"s":"x","S":"y"}`,
	`{"s":"x","\u0069":2}`,
	`{"s":"a\"b:c","i":-0}`,
	`{"s":"x","p":null,"l":null,"a":null}`,
	`{"s":"x","l":["a",null],"n":[1,null,3]}`,
	`{"s":"x","Skip":"z"}`,
	`{"s":"","i":0,"m":""}`,
	`{"s":"x","d":9223372036854775808}`,
	`{"s":"x","m":"turbo"}`,
	`{"i":1}`,
	`null`,
	``,
	`{"s":"x"} {}`,
}

func TestDecoder_FlatMatchesJSONDecoding(t *testing.T) {
	d, err := NewDecoder[flatParams]()
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range decodeSeeds {
		checkSameDecoding(t, d, []byte(raw))
	}
}

// TestDecoder_FlatParsesOnce checks that flat parameters are stored from
// the parsed document instead of a second parse of the JSON.
func TestDecoder_FlatParsesOnce(t *testing.T) {
	d, err := NewDecoder[flatParams]()
	if err != nil {
		t.Fatal(err)
	}
	raw := json.RawMessage(`{"s":"src/main.go","i":20,"m":"fast"}`)
	once := testing.AllocsPerRun(200, func() { _, _ = d.Decode(raw) })
	twice := testing.AllocsPerRun(200, func() { _, _ = referenceDecode(d, raw) })
	if once >= twice {
		t.Errorf("Decode allocates %.0f times, decoding the JSON again %.0f: the document is parsed twice", once, twice)
	}
}

func checkSameDecoding[T any](t *testing.T, d *Decoder[T], raw []byte) {
	t.Helper()
	got, gotErr := d.Decode(raw)
	want, wantErr := referenceDecode(d, raw)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("Decode(%s) error = %v, decoding the JSON gives %v", raw, gotErr, wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Decode(%s) differs from decoding the JSON (-want +got):\n%s", raw, diff)
	}
}

// FuzzDecoderFlat checks that decoding flat parameters from the parsed
// document gives exactly what decoding the JSON gives, errors included.
func FuzzDecoderFlat(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	d, err := NewDecoder[flatParams]()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkSameDecoding(t, d, raw)
	})
}
