package toolsys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// This file is the only place where the raw JSON arguments of a tool call
// are parsed: into a generic document for normalisation and validation, and
// into the tool's parameter struct.

// ArgumentError is one problem with a tool call's arguments. Its text names
// the field and what was expected, for the model to correct its call.
type ArgumentError struct {
	// Field is the path of the offending field ("items[0].label"); empty
	// when the problem concerns the arguments as a whole.
	Field string
	// Problem says what is wrong and what was expected.
	Problem string
	// Unknown marks a field the schema does not define; Problem then lists
	// the known fields when they are known.
	Unknown bool
}

// Error implements error.
func (e *ArgumentError) Error() string {
	switch {
	case e.Unknown && e.Problem != "":
		return fmt.Sprintf("unknown field %q (%s)", e.Field, e.Problem)
	case e.Unknown:
		return fmt.Sprintf("unknown field %q", e.Field)
	case e.Field == "":
		return e.Problem
	}
	return fmt.Sprintf("field %q: %s", e.Field, e.Problem)
}

// ArgumentErrors is the list of problems found in one call's arguments, in a
// deterministic order. errors.As finds each *ArgumentError in it.
type ArgumentErrors []*ArgumentError

// Error implements error.
func (es ArgumentErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the individual *ArgumentError values.
func (es ArgumentErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// argError is a one-element ArgumentErrors.
func argError(field, format string, args ...any) ArgumentErrors {
	return ArgumentErrors{{Field: field, Problem: fmt.Sprintf(format, args...)}}
}

// parseArguments decodes a call's arguments into a JSON object with exact
// numbers. Empty input and null mean "no arguments" (models send both for
// tools without parameters). Anything else that is not one JSON object
// yields ArgumentErrors.
func parseArguments(raw json.RawMessage) (map[string]any, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, syntaxProblem(raw, err)
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, argError("", "arguments are not valid JSON: unexpected data after the object at offset %d", off)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, argError("", "arguments must be a JSON object, got %s", jsonKind(v))
	}
	return obj, nil
}

// syntaxProblem renders a JSON decoding failure with its byte offset.
func syntaxProblem(raw []byte, err error) ArgumentErrors {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return argError("", "arguments are not valid JSON: unexpected end of input at offset %d", len(raw))
	case errors.As(err, &se):
		return argError("", "arguments are not valid JSON: %s at offset %d", se.Error(), se.Offset)
	}
	return argError("", "arguments are not valid JSON: %v", err)
}

// StripEmptyOptionals removes top-level fields whose value is "" or null
// unless they are named in required: models send "" (and, in strict mode,
// null) for an optional parameter they have nothing to say about, which
// would otherwise reach the tool as a present-but-empty value. An empty
// string in a required field is kept, so validation and the tool see it.
// raw is returned unchanged when nothing is removed. Malformed arguments
// yield ArgumentErrors.
func StripEmptyOptionals(raw json.RawMessage, required []string) (json.RawMessage, error) {
	doc, err := parseArguments(raw)
	if err != nil {
		return nil, err
	}
	if !stripEmpty(doc, required) {
		return raw, nil
	}
	return marshalSorted(doc)
}

// stripEmpty removes the empty optional fields of doc and reports whether it
// removed any.
func stripEmpty(doc map[string]any, required []string) bool {
	removed := false
	for k, v := range doc {
		if (v == nil || v == "") && !slices.Contains(required, k) {
			delete(doc, k)
			removed = true
		}
	}
	return removed
}

// Validator checks arguments against a compiled JSON Schema. The typed
// bridge compiles one per tool from its normalised schema; adapters of
// remote tools (MCP) compile their raw schemas with CompileSchema and get the
// same errors. It is safe for concurrent use.
type Validator struct {
	schema  *jsonschema.Schema
	doc     any // the schema document, to name known fields
	printer *message.Printer
}

// schemaURL is the name the schema document is compiled under.
const schemaURL = "mem:///arguments.schema.json"

// CompileSchema compiles a JSON Schema (draft 2020-12 unless it says
// otherwise in "$schema") into a Validator. Formats are asserted. Remote
// references are not fetched.
func CompileSchema(schema json.RawMessage) (*Validator, error) {
	doc, err := decodeJSONNumber(schema)
	if err != nil {
		return nil, &SchemaError{Err: fmt.Errorf("not valid JSON: %w", err)}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, &SchemaError{Err: err}
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, &SchemaError{Err: err}
	}
	return &Validator{schema: sch, doc: doc, printer: message.NewPrinter(language.English)}, nil
}

// Validate checks raw arguments. It returns nil when they are valid, and
// otherwise ArgumentErrors naming every offending field. Empty input and
// null count as {}.
func (v *Validator) Validate(raw json.RawMessage) error {
	doc, err := parseArguments(raw)
	if err != nil {
		return err
	}
	return v.validateDoc(doc)
}

// validateDoc checks an already parsed argument document.
func (v *Validator) validateDoc(doc map[string]any) error {
	err := v.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return argError("", "arguments could not be validated: %v", err)
	}
	out := v.collect(ve, doc, nil)
	if len(out) == 0 {
		out = argError("", "arguments do not match the schema: %v", err)
	}
	slices.SortStableFunc(out, func(a, b *ArgumentError) int { return strings.Compare(a.Field, b.Field) })
	return slices.CompactFunc(out, func(a, b *ArgumentError) bool { return *a == *b })
}

// collect turns a validation error tree into ArgumentErrors.
func (v *Validator) collect(ve *jsonschema.ValidationError, doc any, out ArgumentErrors) ArgumentErrors {
	field := fieldPath(doc, ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, c := range ve.Causes {
			out = v.collect(c, doc, out)
		}
		return out
	case *kind.AnyOf, *kind.OneOf:
		if oneOf, ok := k.(*kind.OneOf); ok && len(oneOf.Subschemas) > 1 {
			return append(out, &ArgumentError{Field: field, Problem: "matches more than one of the allowed forms"})
		}
		var alts []string
		for _, c := range ve.Causes {
			alts = append(alts, v.collect(c, doc, nil).Error())
		}
		return append(out, &ArgumentError{Field: field, Problem: "does not match any allowed form: " + strings.Join(alts, " | ")})
	case *kind.Required:
		for _, m := range k.Missing {
			out = append(out, &ArgumentError{Field: joinField(field, m), Problem: "is required but missing"})
		}
		return out
	case *kind.AdditionalProperties:
		known := v.knownFields(ve.InstanceLocation)
		for _, p := range k.Properties {
			e := &ArgumentError{Field: joinField(field, p), Unknown: true}
			if len(known) > 0 {
				e.Problem = "known fields: " + quoteList(known)
			}
			out = append(out, e)
		}
		return out
	}
	return append(out, &ArgumentError{Field: field, Problem: v.problem(ve, doc)})
}

// problem renders one leaf validation failure.
func (v *Validator) problem(ve *jsonschema.ValidationError, doc any) string {
	got := valueAt(doc, ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.Type:
		return fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), describeValue(got))
	case *kind.Enum:
		return fmt.Sprintf("must be one of %s, got %s", compactJSON(k.Want), compactJSON(k.Got))
	case *kind.Const:
		return fmt.Sprintf("must be %s, got %s", compactJSON(k.Want), compactJSON(k.Got))
	case *kind.Minimum:
		return fmt.Sprintf("must be >= %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("must be <= %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("must be > %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("must be < %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.MultipleOf:
		return fmt.Sprintf("must be a multiple of %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d characters long, got %d", k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long, got %d", k.Want, k.Got)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items, got %d", k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items, got %d", k.Want, k.Got)
	case *kind.Pattern:
		return fmt.Sprintf("must match the pattern %q, got %s", k.Want, compactJSON(k.Got))
	case *kind.Format:
		return fmt.Sprintf("must be a valid %s, got %s", k.Want, describeValue(got))
	case *kind.FalseSchema:
		return "is not allowed"
	}
	return ve.ErrorKind.LocalizedString(v.printer)
}

// knownFields lists the properties the schema defines for the object at the
// instance location, when the schema says so plainly.
func (v *Validator) knownFields(loc []string) []string {
	s := v.doc
	for _, tok := range loc {
		obj, ok := s.(map[string]any)
		if !ok {
			return nil
		}
		if props, ok := obj["properties"].(map[string]any); ok {
			if p, ok := props[tok]; ok {
				s = p
				continue
			}
		}
		if items, ok := obj["items"]; ok {
			s = items
			continue
		}
		return nil
	}
	obj, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	props, _ := obj["properties"].(map[string]any)
	return sortedKeys(props)
}

// fieldPath renders an instance location: "items[0].label".
func fieldPath(doc any, loc []string) string {
	var sb strings.Builder
	cur := doc
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			sb.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		case map[string]any:
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(tok)
			cur = c[tok]
		default:
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(tok)
			cur = nil
		}
	}
	return sb.String()
}

func joinField(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// valueAt returns the value at an instance location, or nil.
func valueAt(doc any, loc []string) any {
	cur := doc
	for _, tok := range loc {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// describeValue says what a value is: `string "abc"`, `number 1.5`, `array`.
func describeValue(v any) string {
	switch v.(type) {
	case string, json.Number, float64, bool:
		return jsonKind(v) + " " + truncateRunes(compactJSON(v), 40)
	}
	return jsonKind(v)
}

// compactJSON renders a decoded value as compact JSON.
func compactJSON(v any) string {
	b, err := marshalSorted(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ratString renders an exact number as the shortest exact decimal, or a
// float approximation for non-terminating fractions.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

// decodeParams decodes validated arguments into p, rejecting unknown fields.
// A failure the schema did not catch (an integer out of the Go type's range)
// still becomes ArgumentErrors naming the field.
func decodeParams(raw json.RawMessage, p any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return argError(te.Field, "cannot be stored as %s: got %s", te.Type, te.Value)
		}
		return syntaxOrOther(raw, err)
	}
	return nil
}

func syntaxOrOther(raw []byte, err error) ArgumentErrors {
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
		return syntaxProblem(raw, err)
	}
	return argError("", "arguments could not be decoded: %v", err)
}
