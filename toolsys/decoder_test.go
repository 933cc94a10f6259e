package toolsys_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/toolsys"
)

type invoiceLine struct {
	Item  string `json:"item"`
	Cents int    `json:"cents" jsonschema:"minimum=0"`
}

type invoice struct {
	Number string        `json:"number" jsonschema:"description=The invoice number"`
	Lines  []invoiceLine `json:"lines"`
	Note   string        `json:"note,omitempty"`
}

func TestDecoder_Decode(t *testing.T) {
	d, err := toolsys.NewDecoder[invoice]()
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Decode(json.RawMessage(`{"number":"F-1","lines":[{"item":"tea","cents":250}],"note":""}`))
	if err != nil {
		t.Fatal(err)
	}
	want := invoice{Number: "F-1", Lines: []invoiceLine{{Item: "tea", Cents: 250}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
}

func TestDecoder_ErrorsNameTheField(t *testing.T) {
	d, err := toolsys.NewDecoder[*invoice]()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, raw, want string }{
		{"missing", `{"lines":[]}`, `field "number": is required but missing`},
		{"nested type", `{"number":"F","lines":[{"item":"x","cents":"3"}]}`, `field "lines[0].cents": expected integer, got string "3"`},
		{"nested bound", `{"number":"F","lines":[{"item":"x","cents":-1}]}`, `field "lines[0].cents": must be >= 0, got -1`},
		{"unknown", `{"number":"F","lines":[],"total":3}`, `unknown field "total"`},
		{"not JSON", `Here is the invoice: {`, `not valid JSON`},
		{"not an object", `[1]`, `must be a JSON object, got array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.Decode(json.RawMessage(tt.raw))
			var ae *toolsys.ArgumentError
			if !errors.As(err, &ae) {
				t.Fatalf("Decode error = %v, want an *ArgumentError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if got != nil {
				t.Errorf("Decode returned %+v with the error", got)
			}
		})
	}
}

func TestDecoder_SchemaIsTheToolSchema(t *testing.T) {
	d, err := toolsys.NewDecoder[invoice]()
	if err != nil {
		t.Fatal(err)
	}
	want, err := toolsys.ReflectSchema[invoice]()
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Schema()) != string(want) {
		t.Errorf("Schema = %s, want %s", d.Schema(), want)
	}
	if _, err := toolsys.StrictSchema(d.Schema()); err != nil {
		t.Errorf("StrictSchema: %v", err)
	}
}

func TestNewDecoder_RefusesANonStruct(t *testing.T) {
	if _, err := toolsys.NewDecoder[[]string](); err == nil || !strings.Contains(err.Error(), "must be a struct") {
		t.Errorf("NewDecoder[[]string] error = %v, want one saying it must be a struct", err)
	}
}
