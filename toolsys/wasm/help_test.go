package wasm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/toolsys"
)

const fullHelp = `# comments and blank lines are ignored

agcore-tool: 1
name: weather
description: Looks up the weather for a city.
permission: read-only
idempotent: false
env: LANG=C.UTF-8
env: MOTTO="quoted stays"
param: --city string required | the city, as "Paris" or "Paris, FR"
param: --units string default=metric enum=metric enum=imperial | unit system
param: --days integer default=1 | how many days
param: --ratio number enum=0.5 enum=1e1
param: --verbose boolean default=false | more detail
param: --tag array items=integer enum=1 enum=2 | repeated
param: --note string default="a | b" | a default with spaces and a bar
param: --key string secret | API key
`

func TestParseHelp_Full(t *testing.T) {
	h, err := ParseHelp("weather.wasm", []byte(fullHelp))
	if err != nil {
		t.Fatal(err)
	}
	no := false
	want := &Help{
		Name: "weather", Description: "Looks up the weather for a city.", Permission: toolsys.PermReadOnly,
		Idempotent: &no, Env: []string{"LANG=C.UTF-8", `MOTTO="quoted stays"`},
		Params: []Param{
			{Name: "city", Type: TypeString, Description: `the city, as "Paris" or "Paris, FR"`, Required: true, Line: 10},
			{Name: "units", Type: TypeString, Description: "unit system", Enum: []any{"metric", "imperial"}, Default: "metric", Line: 11},
			{Name: "days", Type: TypeInteger, Description: "how many days", Default: json.Number("1"), Line: 12},
			{Name: "ratio", Type: TypeNumber, Enum: []any{json.Number("0.5"), json.Number("10")}, Line: 13},
			{Name: "verbose", Type: TypeBoolean, Description: "more detail", Default: false, Line: 14},
			{Name: "tag", Type: TypeArray, Items: TypeInteger, Description: "repeated", Enum: []any{json.Number("1"), json.Number("2")}, Line: 15},
			{Name: "note", Type: TypeString, Description: "a default with spaces and a bar", Default: "a | b", Line: 16},
			{Name: "key", Type: TypeString, Description: "API key", Secret: true, Line: 17},
		},
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("ParseHelp (-want +got):\n%s", diff)
	}
	if got := h.secretParams(); len(got) != 1 || got[0] != "key" {
		t.Errorf("secretParams = %v", got)
	}
	schema, err := h.Schema()
	if err != nil {
		t.Fatal(err)
	}
	wantSchema := `{"additionalProperties":false,"properties":{` +
		`"city":{"description":"the city, as \"Paris\" or \"Paris, FR\"","type":"string"},` +
		`"days":{"default":1,"description":"how many days","type":"integer"},` +
		`"key":{"description":"API key","type":"string"},` +
		`"note":{"default":"a | b","description":"a default with spaces and a bar","type":"string"},` +
		`"ratio":{"enum":[0.5,10],"type":"number"},` +
		`"tag":{"description":"repeated","items":{"enum":[1,2],"type":"integer"},"type":"array"},` +
		`"units":{"default":"metric","description":"unit system","enum":["metric","imperial"],"type":"string"},` +
		`"verbose":{"default":false,"description":"more detail","type":"boolean"}},` +
		`"required":["city"],"type":"object"}`
	if diff := cmp.Diff(wantSchema, string(schema)); diff != "" {
		t.Errorf("Schema (-want +got):\n%s", diff)
	}
	v, err := toolsys.CompileSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(json.RawMessage(`{"city":"Oslo","tag":[1,3]}`)); err == nil || !strings.Contains(err.Error(), "tag[1]") {
		t.Errorf("Validate = %v, want the enum of the items enforced", err)
	}
}

func TestParseHelp_Minimal(t *testing.T) {
	h, err := ParseHelp("", []byte("\xef\xbb\xbfagcore-tool: 1\r\ndescription: Does one thing.\r\npermission: none\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "" || h.Description != "Does one thing." || h.Permission != toolsys.PermNone || h.Idempotent != nil || h.Params != nil {
		t.Errorf("ParseHelp = %+v", h)
	}
	schema, err := h.Schema()
	if err != nil || string(schema) != `{"additionalProperties":false,"properties":{},"type":"object"}` {
		t.Errorf("Schema = %s, %v", schema, err)
	}
}

func TestParseHelp_Errors(t *testing.T) {
	const head = "agcore-tool: 1\ndescription: d\npermission: none\n"
	tests := []struct {
		name, text string
		line       int
		want       string
	}{
		{"empty", "", 0, `no "agcore-tool: 1" line`},
		{"usage text", "Usage: tool [flags]\n", 1, `the first line must be "agcore-tool: 1"`},
		{"version", "agcore-tool: 2\n", 1, `convention version "2" is not supported`},
		{"no description", "agcore-tool: 1\npermission: none\n", 0, `no "description:" line`},
		{"no permission", "agcore-tool: 1\ndescription: d\n", 0, `no "permission:" line`},
		{"bad permission", "agcore-tool: 1\ndescription: d\npermission: root\n", 3, `unknown permission "root"`},
		{"unknown key", head + "author: me\n", 4, `unknown key "author"`},
		{"not key value", head + "just words\n", 4, `is not a "key: value" line`},
		{"twice", head + "description: again\n", 4, `"description" is given twice (first on line 2)`},
		{"header twice", head + "agcore-tool: 1\n", 4, `"agcore-tool" is given twice`},
		{"bad name", head + "name: two words\n", 4, `name "two words" is not`},
		{"idempotent", head + "idempotent: yes\n", 4, `idempotent must be true or false`},
		{"env", head + "env: 1X=y\n", 4, `env wants NAME=VALUE`},
		{"env twice", head + "env: A=1\nenv: A=2\n", 5, `env A is given twice`},
		{"param short", head + "param: --x\n", 4, `param wants --FLAG TYPE`},
		{"flag", head + "param: -x string\n", 4, `"-x" is not a flag`},
		{"type", head + "param: --ratio float | a ratio\n", 4, `param --ratio: unknown type "float"`},
		{"param twice", head + "param: --x string\nparam: --x integer\n", 5, `param --x is declared twice (first on line 4)`},
		{"attribute", head + "param: --x string optional\n", 4, `unknown attribute "optional"`},
		{"items on string", head + "param: --x string items=integer\n", 4, `only an array takes items`},
		{"enum type", head + "param: --x integer enum=a\n", 4, `enum value: "a" is not an integer`},
		{"enum twice", head + "param: --x string enum=a enum=a\n", 4, `enum value "a" is given twice`},
		{"default type", head + "param: --x number default=fast\n", 4, `default: "fast" is not a JSON number`},
		{"default not in enum", head + "param: --x string enum=a default=b\n", 4, `default "b" is not one of the enum values`},
		{"default on required", head + "param: --x string required default=a\n", 4, `a required parameter takes no default`},
		{"default on array", head + "param: --x array default=a\n", 4, `an array takes no default`},
		{"boolean default true", head + "param: --x boolean default=true\n", 4, `its default must be false`},
		{"default twice", head + "param: --x string default=a default=b\n", 4, `default is given twice`},
		{"unterminated quote", head + `param: --x string default="abc` + "\n", 4, `unterminated quoted value`},
		{"bad quote", head + `param: --x string default=a"b"` + "\n", 4, `must be quoted as a whole`},
		{"NaN", head + "param: --x number default=NaN\n", 4, `"NaN" is not a JSON number`},
		{"not utf-8", "agcore-tool: 1\ndescription: \xff\n", 0, `not valid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseHelp("t.wasm", []byte(tt.text))
			var he *HelpError
			if !errors.As(err, &he) {
				t.Fatalf("ParseHelp = %v, want a *HelpError", err)
			}
			if he.Line != tt.line || he.File != "t.wasm" || !strings.Contains(he.Problem, tt.want) {
				t.Errorf("ParseHelp = line %d: %q, want line %d and %q", he.Line, he.Problem, tt.line, tt.want)
			}
			if tt.line > 0 && !strings.HasPrefix(err.Error(), "t.wasm: --help line ") {
				t.Errorf("Error() = %q, want it to name the file and the line", err.Error())
			}
		})
	}
}

func TestParseHelp_Limits(t *testing.T) {
	var b strings.Builder
	b.WriteString("agcore-tool: 1\ndescription: d\npermission: none\n")
	for i := range maxParams + 1 {
		b.WriteString("param: --p" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + string(rune('a'+i/26)) + " string\n")
	}
	if _, err := ParseHelp("", []byte(b.String())); err == nil || !strings.Contains(err.Error(), "more than 64 parameters") {
		t.Errorf("ParseHelp with %d parameters = %v", maxParams+1, err)
	}
	if _, err := ParseHelp("", make([]byte, maxHelpSize+1)); err == nil || !strings.Contains(err.Error(), "at most 65536 are read") {
		t.Errorf("ParseHelp of an oversized text = %v", err)
	}
}

func TestHelpError_Error(t *testing.T) {
	for _, tt := range []struct {
		e    HelpError
		want string
	}{
		{HelpError{File: "/t/x.wasm", Line: 3, Problem: "p"}, "/t/x.wasm: --help line 3: p"},
		{HelpError{Line: 3, Problem: "p"}, "--help line 3: p"},
		{HelpError{File: "x.wasm", Problem: "p"}, "x.wasm: --help: p"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	le := &LoadError{Path: "/t/x.wasm", Err: &HelpError{File: "/t/x.wasm", Line: 3, Problem: "p"}}
	if got := le.Error(); got != "wasm tool /t/x.wasm: --help line 3: p" {
		t.Errorf("LoadError = %q", got)
	}
	le = &LoadError{Path: "/t/x.wasm", Err: ErrNotCommand}
	if got := le.Error(); got != "wasm tool /t/x.wasm: not a WASI command (no _start export)" || !errors.Is(le, ErrNotCommand) {
		t.Errorf("LoadError = %q", got)
	}
}

// FuzzParseHelp checks that any text either parses into a help whose
// schema normalises, compiles and maps the arguments it accepts to a
// command line, or yields a *HelpError within the text's lines.
func FuzzParseHelp(f *testing.F) {
	f.Add([]byte(fullHelp))
	f.Add([]byte("agcore-tool: 1\ndescription: d\npermission: none\n"))
	f.Add([]byte("agcore-tool: 1\ndescription: d\npermission: write\nparam: --x array items=number enum=1 | d\n"))
	f.Add([]byte(`agcore-tool: 1` + "\n" + `param: --q string default="\u00e9\" |" | d`))
	f.Fuzz(func(t *testing.T, text []byte) {
		h, err := ParseHelp("f.wasm", text)
		if err != nil {
			var he *HelpError
			if !errors.As(err, &he) {
				t.Fatalf("ParseHelp error %v is not a *HelpError", err)
			}
			if lines := strings.Count(string(text), "\n") + 1; he.Line < 0 || he.Line > lines {
				t.Fatalf("line %d is outside the text's %d lines", he.Line, lines)
			}
			return
		}
		schema, err := h.Schema()
		if err != nil {
			t.Fatalf("Schema of a parsed help: %v", err)
		}
		v, err := toolsys.CompileSchema(schema)
		if err != nil {
			t.Fatalf("the schema does not compile: %v\n%s", err, schema)
		}
		args := map[string]any{}
		for _, p := range h.Params {
			if p.Default != nil {
				args[p.Name] = p.Default
			} else if p.Enum != nil {
				if p.Type == TypeArray {
					args[p.Name] = []any{p.Enum[0]}
				} else {
					args[p.Name] = p.Enum[0]
				}
			}
		}
		raw, _ := json.Marshal(args)
		if err := v.Validate(raw); err != nil {
			if required(h) {
				return // required parameters without a value
			}
			t.Fatalf("declared defaults and enum values do not validate: %v\n%s\n%s", err, schema, raw)
		}
		argv, err := h.Args(args)
		if err != nil {
			t.Fatalf("Args(%s) = %v", raw, err)
		}
		for _, a := range argv {
			if strings.IndexByte(a, 0) >= 0 {
				t.Fatalf("argument %q holds a NUL byte", a)
			}
		}
	})
}

func required(h *Help) bool {
	for _, p := range h.Params {
		if p.Required {
			return true
		}
	}
	return false
}
