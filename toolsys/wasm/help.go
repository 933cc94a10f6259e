package wasm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agcore/agcore/toolsys"
)

// HelpVersion is the version of the --help convention this package reads:
// the value of the "agcore-tool:" line.
const HelpVersion = "1"

// Bounds of a help text.
const (
	// maxHelpSize is the most --help output read, in bytes.
	maxHelpSize = 64 << 10
	// maxParams is the most parameters a tool may declare.
	maxParams = 64
	// maxEnv is the most environment variables a tool may declare.
	maxEnv = 64
)

// ParamType is the JSON type of a parameter.
type ParamType string

// The parameter types of the convention.
const (
	TypeString  ParamType = "string"
	TypeInteger ParamType = "integer"
	TypeNumber  ParamType = "number"
	TypeBoolean ParamType = "boolean"
	TypeArray   ParamType = "array"
)

// parseType returns the ParamType named s.
func parseType(s string) (ParamType, bool) {
	switch t := ParamType(s); t {
	case TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeArray:
		return t, true
	}
	return "", false
}

// Help is what a tool declares about itself on --help (see the package
// documentation for the convention, and ParseHelp).
type Help struct {
	// Name is the tool's name as the model calls it. Empty means the
	// file's name without ".wasm".
	Name string
	// Description is the one-line description the model reads.
	Description string
	// Permission is the level the permission pipeline checks. It also
	// decides what the tool sees of the workspace: nothing at PermNone,
	// a read-only view at PermReadOnly, a writable one above.
	Permission toolsys.Permission
	// Idempotent says whether an interrupted call may be run again. Nil
	// means: only when Permission is at most PermReadOnly.
	Idempotent *bool
	// Env is the tool's whole environment, "NAME=value" entries in order.
	Env []string
	// Params are the parameters, in the order the tool declared them,
	// which is the order of its command-line arguments.
	Params []Param
}

// Param is one declared parameter: a command-line flag and a property of
// the schema the model sees.
type Param struct {
	// Name is the flag without its dashes ("mode" for --mode) and the
	// name of the schema property.
	Name string
	// Type is the JSON type of the value.
	Type ParamType
	// Items is the type of an array's items (TypeString unless declared);
	// empty for other types.
	Items ParamType
	// Description tells the model what the parameter is for.
	Description string
	// Required makes the parameter mandatory.
	Required bool
	// Secret lets the parameter carry <secret_ref:NAME> placeholders (see
	// toolsys.Tool.SecretParams).
	Secret bool
	// Enum lists the allowed values (of the items, for an array), decoded
	// to the parameter's type; nil allows any.
	Enum []any
	// Default is the value the tool uses when the parameter is left out,
	// shown to the model; nil means none is declared.
	Default any
	// Line is the line of the help text that declared the parameter.
	Line int
}

// HelpError says which line of a help text breaks the convention.
type HelpError struct {
	// File is the tool's file, when known.
	File string
	// Line is the 1-based line; 0 means the text as a whole.
	Line int
	// Problem says what is wrong and what was expected.
	Problem string
}

// Error implements error: "codec.wasm: --help line 5: ...".
func (e *HelpError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "--help line %d: ", e.Line)
	} else {
		b.WriteString("--help: ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

var (
	// flagRE matches a parameter's flag.
	flagRE = regexp.MustCompile(`\A--([A-Za-z][A-Za-z0-9_-]{0,63})\z`)
	// envNameRE matches a declared environment variable's name.
	envNameRE = regexp.MustCompile(`\A[A-Za-z_][A-Za-z0-9_]{0,127}\z`)
	// nameRE matches a tool name, as the registry does.
	nameRE = regexp.MustCompile(`\A[a-zA-Z0-9_-]{1,64}\z`)
)

// ParseHelp parses a tool's --help output by the convention of this
// package. file names the tool in errors (it may be empty). A text that
// breaks the convention yields a *HelpError naming the line.
//
// The text is lines of "key: value". Blank lines and lines starting with
// "#" are ignored. The first other line must be "agcore-tool: 1". Then:
//
//	name: NAME                 optional; default: the file's name
//	description: TEXT          required, one line
//	permission: LEVEL          required: none, read-only, write or execute
//	idempotent: true|false     optional
//	env: NAME=VALUE            repeatable: the tool's whole environment
//	param: --FLAG TYPE [ATTR]... [| DESCRIPTION]   repeatable
//
// TYPE is string, integer, number, boolean or array. The attributes are
// required, secret, default=VALUE, enum=VALUE (repeated, one per allowed
// value) and, for an array, items=TYPE. A VALUE with spaces is written as a
// double-quoted Go string.
func ParseHelp(file string, text []byte) (*Help, error) {
	p := &helpParser{file: file, h: &Help{}, seen: map[string]int{}}
	return p.parse(text)
}

// helpParser holds the state of one ParseHelp.
type helpParser struct {
	file   string
	h      *Help
	seen   map[string]int // single-valued keys and flags -> line
	header bool
	permOK bool
}

func (p *helpParser) fail(line int, format string, args ...any) *HelpError {
	return &HelpError{File: p.file, Line: line, Problem: fmt.Sprintf(format, args...)}
}

func (p *helpParser) parse(text []byte) (*Help, error) {
	text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf")) // a byte-order mark
	if len(text) > maxHelpSize {
		return nil, p.fail(0, "the text is %d bytes long; at most %d are read", len(text), maxHelpSize)
	}
	if !utf8.Valid(text) {
		return nil, p.fail(0, "the text is not valid UTF-8")
	}
	for i, raw := range strings.Split(string(text), "\n") {
		line := i + 1
		s := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if err := p.line(line, s); err != nil {
			return nil, err
		}
	}
	switch {
	case !p.header:
		return nil, p.fail(0, "no \"agcore-tool: %s\" line: the program does not follow the agcore tool convention", HelpVersion)
	case p.h.Description == "":
		return nil, p.fail(0, "no \"description:\" line")
	case !p.permOK:
		return nil, p.fail(0, "no \"permission:\" line (want none, read-only, write or execute)")
	}
	return p.h, nil
}

// line parses one meaningful line.
func (p *helpParser) line(line int, s string) error {
	key, value, ok := strings.Cut(s, ":")
	if !ok {
		return p.fail(line, "%q is not a \"key: value\" line", clip(s))
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if !p.header {
		if key != "agcore-tool" {
			return p.fail(line, "the first line must be \"agcore-tool: %s\", got %q", HelpVersion, clip(s))
		}
		if value != HelpVersion {
			return p.fail(line, "convention version %q is not supported (want %s)", clip(value), HelpVersion)
		}
		p.header = true
		return nil
	}
	switch key {
	case "name", "description", "permission", "idempotent":
		if first, dup := p.seen[key]; dup {
			return p.fail(line, "%q is given twice (first on line %d)", key, first)
		}
		p.seen[key] = line
	}
	switch key {
	case "name":
		if !nameRE.MatchString(value) {
			return p.fail(line, "name %q is not 1 to 64 of [a-zA-Z0-9_-]", clip(value))
		}
		p.h.Name = value
	case "description":
		if value == "" {
			return p.fail(line, "the description is empty")
		}
		p.h.Description = value
	case "permission":
		perm, err := toolsys.ParsePermission(value)
		if err != nil {
			return p.fail(line, "%v", err)
		}
		p.h.Permission, p.permOK = perm, true
	case "idempotent":
		if value != "true" && value != "false" {
			return p.fail(line, "idempotent must be true or false, got %q", clip(value))
		}
		b := value == "true"
		p.h.Idempotent = &b
	case "env":
		return p.env(line, value)
	case "param":
		return p.param(line, value)
	case "agcore-tool":
		return p.fail(line, "\"agcore-tool\" is given twice")
	default:
		return p.fail(line, "unknown key %q (known: name, description, permission, idempotent, env, param)", clip(key))
	}
	return nil
}

// env parses "NAME=VALUE".
func (p *helpParser) env(line int, value string) error {
	name, v, ok := strings.Cut(value, "=")
	if !ok || !envNameRE.MatchString(name) {
		return p.fail(line, "env wants NAME=VALUE with NAME of [A-Za-z0-9_], got %q", clip(value))
	}
	if strings.IndexByte(v, 0) >= 0 {
		return p.fail(line, "env %s: the value contains a NUL byte", name)
	}
	if len(p.h.Env) >= maxEnv {
		return p.fail(line, "more than %d env lines", maxEnv)
	}
	if first, dup := p.seen["env "+name]; dup {
		return p.fail(line, "env %s is given twice (first on line %d)", name, first)
	}
	p.seen["env "+name] = line
	p.h.Env = append(p.h.Env, name+"="+v)
	return nil
}

// param parses "--FLAG TYPE [ATTR]... [| DESCRIPTION]".
func (p *helpParser) param(line int, value string) error {
	if len(p.h.Params) >= maxParams {
		return p.fail(line, "more than %d parameters", maxParams)
	}
	toks, desc, err := tokenize(value)
	if err != nil {
		return p.fail(line, "param: %v", err)
	}
	if len(toks) < 2 {
		return p.fail(line, "param wants --FLAG TYPE [attributes] [| description], got %q", clip(value))
	}
	m := flagRE.FindStringSubmatch(toks[0])
	if m == nil {
		return p.fail(line, "param: %q is not a flag (want --name, a letter then letters, digits, _ or -)", clip(toks[0]))
	}
	pr := Param{Name: m[1], Description: desc, Line: line}
	if first, dup := p.seen["--"+pr.Name]; dup {
		return p.fail(line, "param --%s is declared twice (first on line %d)", pr.Name, first)
	}
	p.seen["--"+pr.Name] = line
	t, ok := parseType(toks[1])
	if !ok {
		return p.fail(line, "param --%s: unknown type %q (want string, integer, number, boolean or array)", pr.Name, clip(toks[1]))
	}
	pr.Type = t
	if t == TypeArray {
		pr.Items = TypeString
	}
	var enumRaw []string
	var defRaw *string
	for _, tok := range toks[2:] {
		k, v, hasValue := strings.Cut(tok, "=")
		if hasValue {
			if v, err = unquote(v); err != nil {
				return p.fail(line, "param --%s: %s: %v", pr.Name, k, err)
			}
		}
		switch {
		case k == "required" && !hasValue:
			pr.Required = true
		case k == "secret" && !hasValue:
			pr.Secret = true
		case k == "enum" && hasValue:
			enumRaw = append(enumRaw, v)
		case k == "default" && hasValue:
			if defRaw != nil {
				return p.fail(line, "param --%s: default is given twice", pr.Name)
			}
			defRaw = &v
		case k == "items" && hasValue:
			it, ok := parseType(v)
			if t != TypeArray || !ok || it == TypeArray {
				return p.fail(line, "param --%s: items=%s: only an array takes items, of type string, integer, number or boolean", pr.Name, clip(v))
			}
			pr.Items = it
		default:
			return p.fail(line, "param --%s: unknown attribute %q (known: required, secret, default=VALUE, enum=VALUE, items=TYPE)", pr.Name, clip(tok))
		}
	}
	if err := p.values(&pr, enumRaw, defRaw); err != nil {
		return err
	}
	p.h.Params = append(p.h.Params, pr)
	return nil
}

// values decodes a parameter's enum and default to its type.
func (p *helpParser) values(pr *Param, enumRaw []string, defRaw *string) error {
	elem := pr.Type
	if elem == TypeArray {
		elem = pr.Items
	}
	for _, raw := range enumRaw {
		v, err := decodeValue(elem, raw)
		if err != nil {
			return p.fail(pr.Line, "param --%s: enum value: %v", pr.Name, err)
		}
		if slices.ContainsFunc(pr.Enum, func(e any) bool { return sameValue(e, v) }) {
			return p.fail(pr.Line, "param --%s: enum value %q is given twice", pr.Name, clip(raw))
		}
		pr.Enum = append(pr.Enum, v)
	}
	if defRaw == nil {
		return nil
	}
	switch {
	case pr.Type == TypeArray:
		return p.fail(pr.Line, "param --%s: an array takes no default", pr.Name)
	case pr.Required:
		return p.fail(pr.Line, "param --%s: a required parameter takes no default", pr.Name)
	}
	v, err := decodeValue(pr.Type, *defRaw)
	if err != nil {
		return p.fail(pr.Line, "param --%s: default: %v", pr.Name, err)
	}
	if pr.Type == TypeBoolean && v == true {
		return p.fail(pr.Line, "param --%s: a boolean is passed as a bare flag when true, so its default must be false", pr.Name)
	}
	if pr.Enum != nil && !slices.ContainsFunc(pr.Enum, func(e any) bool { return sameValue(e, v) }) {
		return p.fail(pr.Line, "param --%s: default %q is not one of the enum values", pr.Name, clip(*defRaw))
	}
	pr.Default = v
	return nil
}

// decodeValue decodes raw as a value of type t: a string as is, a number
// as a json.Number, a boolean as a bool.
func decodeValue(t ParamType, raw string) (any, error) {
	switch t {
	case TypeString:
		if strings.IndexByte(raw, 0) >= 0 {
			return nil, errors.New("the value contains a NUL byte")
		}
		return raw, nil
	case TypeInteger:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", clip(raw))
		}
		return json.Number(strconv.FormatInt(n, 10)), nil
	case TypeNumber:
		// The number is kept in its shortest form, so that a literal with
		// a huge exponent cannot make the schema's exact arithmetic slow.
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || !json.Valid([]byte(raw)) {
			return nil, fmt.Errorf("%q is not a JSON number", clip(raw))
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case TypeBoolean:
		switch raw {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not true or false", clip(raw))
	}
	return nil, fmt.Errorf("type %s takes no value", t)
}

// sameValue compares two decoded values; numbers compare by value.
func sameValue(a, b any) bool {
	an, aNum := a.(json.Number)
	bn, bNum := b.(json.Number)
	if aNum && bNum {
		af, errA := an.Float64()
		bf, errB := bn.Float64()
		return errA == nil && errB == nil && af == bf
	}
	return a == b
}

// tokenize splits the value of a param line into whitespace-separated
// tokens, up to a token that is a lone "|": the rest of the line is the
// description. A double-quoted Go string may appear in a token and may
// hold spaces and "|".
func tokenize(s string) (toks []string, desc string, err error) {
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			break
		}
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			if s[i] != '"' {
				i++
				continue
			}
			end, err := quotedEnd(s, i)
			if err != nil {
				return nil, "", err
			}
			i = end
		}
		tok := s[start:i]
		if tok == "|" {
			return toks, strings.TrimSpace(s[i:]), nil
		}
		toks = append(toks, tok)
	}
	return toks, "", nil
}

// quotedEnd returns the index just past the double-quoted string that
// starts at s[i].
func quotedEnd(s string, i int) (int, error) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated quoted value at %q", clip(s[i:]))
}

// unquote returns v, or the Go string v spells when it is double-quoted.
func unquote(v string) (string, error) {
	if !strings.HasPrefix(v, `"`) {
		if strings.Contains(v, `"`) {
			return "", fmt.Errorf("%q: a quoted value must be quoted as a whole", clip(v))
		}
		return v, nil
	}
	u, err := strconv.Unquote(v)
	if err != nil {
		return "", fmt.Errorf("%q is not a valid double-quoted string", clip(v))
	}
	return u, nil
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
