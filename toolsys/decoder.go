package toolsys

// This file holds Decoder, the parser a typed tool uses for its arguments,
// for any caller that wants JSON checked and decoded into a Go struct the
// same way (an agent's typed answer).

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Decoder checks JSON objects against the schema of a struct T and decodes
// them into T, exactly as a Typed[T] tool's arguments are: empty optional
// top-level fields stripped, validated against T's normalised schema,
// decoded with unknown fields rejected. Its errors are ArgumentErrors that
// name the field. A Decoder is built once (NewDecoder reflects and compiles
// T's schema) and is safe for concurrent use.
type Decoder[T any] struct {
	schema    json.RawMessage
	validator *Validator
	required  []string
}

// NewDecoder reflects T's schema (see ReflectSchema) and compiles its
// validator. T must be a struct or a pointer to one; a type whose schema
// cannot be reflected (a channel field, a recursive type) yields an error
// naming T.
func NewDecoder[T any]() (*Decoder[T], error) {
	schema, err := ReflectSchema[T]()
	if err != nil {
		return nil, err
	}
	v, err := CompileSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("compiling the schema of %s: %w", typeName[T](), err)
	}
	return &Decoder[T]{schema: schema, validator: v, required: requiredOf(schema)}, nil
}

// Schema returns T's normalised JSON Schema. Pass it to StrictSchema for
// the form strict providers want.
func (d *Decoder[T]) Schema() json.RawMessage { return d.schema }

// Decode checks raw and decodes it into T. Empty input and null count as
// {}. A document that does not fit yields ArgumentErrors.
func (d *Decoder[T]) Decode(raw json.RawMessage) (T, error) {
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
	target := any(&p)
	if rt := reflect.TypeFor[T](); rt.Kind() == reflect.Pointer {
		// T is a pointer to the struct: decode into a fresh struct.
		pv := reflect.New(rt.Elem())
		reflect.ValueOf(&p).Elem().Set(pv)
		target = p
	}
	if err := decodeParams(raw, target); err != nil {
		return p, err
	}
	return p, nil
}
