package toolsys

// This file holds docPlan: decoding an argument document that has already
// been parsed and validated into a flat parameter struct, without parsing
// the JSON a second time.

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// docPlan stores a parsed argument document into a struct whose fields
// are all "flat": booleans, strings, integers and floats, pointers to
// them, slices of them, and empty interfaces. For such a struct it gives
// exactly what encoding/json's Decoder (with DisallowUnknownFields) gives
// for the same arguments, or reports that it cannot, and the caller then
// decodes the JSON as before, with the same result and the same errors.
// It cannot when a key is not the exact name of a field, when a value
// does not fit its field (a fraction or an overflow in an integer field,
// a string in a number field, a null in a field that cannot be null), or
// when a key appears twice (encoding/json would decode both occurrences).
type docPlan struct {
	fields map[string]planField
}

// planField is one field of a docPlan's struct.
type planField struct {
	index int
	typ   reflect.Type
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
)

// newDocPlan returns the plan for the struct t (or a pointer to one), or
// nil when one of its fields is not flat or its JSON names are not plain.
func newDocPlan(t reflect.Type) *docPlan {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || customDecoding(t) {
		return nil
	}
	p := &docPlan{fields: make(map[string]planField, t.NumField())}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // embedded fields are promoted by rules of their own
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if slices.Contains(strings.Split(opts, ","), "string") || !plainName(name) {
			return nil
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := p.fields[name]; dup || !flatType(f.Type) {
			return nil
		}
		p.fields[name] = planField{index: i, typ: f.Type}
	}
	return p
}

// plainName reports whether a json tag name is made of letters, digits,
// '_' and '-' only, which encoding/json takes as it is.
func plainName(name string) bool {
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// customDecoding reports whether t or *t decodes itself from JSON.
func customDecoding(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || t.Implements(textUnmarshalerType) ||
		pt.Implements(jsonUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

// scalarType reports whether t is a boolean, a string, an integer or a
// float that decodes without methods of its own.
func scalarType(t reflect.Type) bool {
	if customDecoding(t) || t == jsonNumberType {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// flatType reports whether a field of type t is flat (see docPlan).
func flatType(t reflect.Type) bool {
	switch {
	case scalarType(t):
		return true
	case t.Kind() == reflect.Interface:
		return t.NumMethod() == 0
	case customDecoding(t):
		return false
	case t.Kind() == reflect.Pointer:
		return scalarType(t.Elem())
	case t.Kind() == reflect.Slice:
		// []byte is base64 text in JSON.
		return t.Elem().Kind() != reflect.Uint8 && scalarType(t.Elem())
	}
	return false
}

// decode stores doc into dst (a settable zero struct) and reports whether
// it could; dst is left partly set when it could not. doc must hold every
// member of the arguments it was parsed from (see topLevelMembers).
func (p *docPlan) decode(doc map[string]any, dst reflect.Value) bool {
	for k, v := range doc {
		f, ok := p.fields[k]
		if !ok || !storeValue(dst.Field(f.index), v) {
			return false
		}
	}
	return true
}

// storeValue stores the document value v into the zero field dst, as
// encoding/json decodes it, and reports whether it could.
func storeValue(dst reflect.Value, v any) bool {
	if v == nil {
		switch dst.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Slice:
			return true // stays nil
		}
		// encoding/json leaves the field as it was, which only matters
		// when a key appears twice: decode the JSON instead.
		return false
	}
	switch dst.Kind() {
	case reflect.Interface:
		iv, ok := interfaceValue(v)
		if ok {
			dst.Set(reflect.ValueOf(iv))
		}
		return ok
	case reflect.Pointer:
		e := reflect.New(dst.Type().Elem())
		if !storeScalar(e.Elem(), v) {
			return false
		}
		dst.Set(e)
		return true
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return false
		}
		s := reflect.MakeSlice(dst.Type(), len(list), len(list))
		for i, item := range list {
			if item != nil && !storeScalar(s.Index(i), item) {
				return false
			}
		}
		dst.Set(s)
		return true
	}
	return storeScalar(dst, v)
}

// storeScalar stores a boolean, string or number into dst, a scalar
// field, with encoding/json's parsing and range checks.
func storeScalar(dst reflect.Value, v any) bool {
	switch x := v.(type) {
	case bool:
		if dst.Kind() != reflect.Bool {
			return false
		}
		dst.SetBool(x)
	case string:
		if dst.Kind() != reflect.String {
			return false
		}
		dst.SetString(x)
	case json.Number:
		s := string(x)
		switch dst.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || dst.OverflowInt(n) {
				return false
			}
			dst.SetInt(n)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil || dst.OverflowUint(n) {
				return false
			}
			dst.SetUint(n)
		case reflect.Float32, reflect.Float64:
			n, err := strconv.ParseFloat(s, dst.Type().Bits())
			if err != nil || dst.OverflowFloat(n) {
				return false
			}
			dst.SetFloat(n)
		default:
			return false
		}
	default:
		return false
	}
	return true
}

// interfaceValue converts a document value into what encoding/json puts
// in an empty interface: numbers become float64.
func interfaceValue(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := interfaceValue(e)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := interfaceValue(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return v, true
}

// topLevelMembers counts the members of the JSON object raw, which must be
// valid JSON: the colons outside strings at depth one.
func topLevelMembers(raw []byte) int {
	n, depth := 0, 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ':':
			if depth == 1 {
				n++
			}
		}
	}
	return n
}
