package toolsys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"
)

// RuleSubjecter is implemented by a Tool that says what the argument
// pattern of a permission rule is matched against: the command for a shell
// tool, the workspace-relative path for a file tool. A tool that does not
// implement it is matched on its compact JSON arguments. tc is the call's
// context (its Workspace lets a file tool canonicalise a path); it may be nil.
type RuleSubjecter interface {
	RuleSubject(args json.RawMessage, tc *Context) string
}

// TypedRuleSubjecter is the typed form of RuleSubjecter: a Typed[P] that
// implements it is asked with its decoded parameters. If the arguments do not
// decode, the compact JSON is used (the call will then fail validation).
type TypedRuleSubjecter[P any] interface {
	RuleSubject(params P, tc *Context) string
}

// Bridge wraps a typed tool into a Tool. It reflects P's JSON Schema once,
// normalises it and compiles its validator, all at construction; P must be
// a struct (or a pointer to one). A plain field is required; a field tagged
// omitempty (or omitzero) is optional. Field descriptions, enums and bounds
// come from `jsonschema:"..."` struct tags.
//
// Execute runs, in order: argument normalisation (StripEmptyOptionals),
// validation against the schema, decoding into P (unknown fields rejected),
// the tool's Precheck if it implements Prechecker[P], and the tool's Execute.
// Each failure before the tool's Execute is a Result with IsError whose text
// names the field and what was expected. Secret placeholders are substituted
// before Execute by the Registry (see Registry.Call).
//
// Bridge panics if P's schema cannot be reflected or normalised (a
// programmer error, such as a channel field or a recursive type), with a
// message naming P.
func Bridge[P any](t Typed[P]) Tool {
	d, err := NewDecoder[P]()
	if err != nil {
		panic(fmt.Sprintf("toolsys: Bridge for tool %q: %v", t.Name(), err))
	}
	return &bridge[P]{t: t, dec: d}
}

// ReflectSchema returns the normalised JSON Schema of the parameter struct P,
// as Bridge uses it.
func ReflectSchema[P any]() (schema json.RawMessage, err error) {
	name := typeName[P]()
	t := reflect.TypeFor[P]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("parameters %s must be a struct, not %s", name, t.Kind())
	}
	defer func() {
		if r := recover(); r != nil {
			schema, err = nil, fmt.Errorf("cannot reflect the schema of %s: %v", name, r)
		}
	}()
	r := &jsonschema.Reflector{
		Anonymous:                  true,
		AllowAdditionalProperties:  false,
		RequiredFromJSONSchemaTags: false,
	}
	raw, err := json.Marshal(r.ReflectFromType(t))
	if err != nil {
		return nil, fmt.Errorf("encoding the schema of %s: %w", name, err)
	}
	schema, err = NormalizeSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("normalising the schema of %s: %w", name, err)
	}
	return schema, nil
}

func typeName[P any]() string { return reflect.TypeFor[P]().String() }

// bridge is the Tool Bridge returns.
type bridge[P any] struct {
	t   Typed[P]
	dec *Decoder[P]
}

var (
	_ RuleSubjecter      = (*bridge[struct{}])(nil)
	_ MultiRuleSubjecter = (*bridge[struct{}])(nil)
)

func (b *bridge[P]) Name() string            { return b.t.Name() }
func (b *bridge[P]) Description() string     { return b.t.Description() }
func (b *bridge[P]) Schema() json.RawMessage { return b.dec.Schema() }
func (b *bridge[P]) Permission() Permission  { return b.t.Permission() }
func (b *bridge[P]) SecretParams() []string  { return b.t.SecretParams() }

// Idempotent reports the typed tool's own answer if it implements
// IdempotentTool, and otherwise whether its permission is at most
// PermReadOnly.
func (b *bridge[P]) Idempotent() bool {
	if it, ok := b.t.(IdempotentTool); ok {
		return it.Idempotent()
	}
	return b.t.Permission() <= PermReadOnly
}

// RuleSubject asks the typed tool when it implements TypedRuleSubjecter[P],
// and otherwise returns the compact JSON arguments.
func (b *bridge[P]) RuleSubject(args json.RawMessage, tc *Context) string {
	if rs, ok := b.t.(TypedRuleSubjecter[P]); ok {
		if p, err := b.parse(args); err == nil {
			return rs.RuleSubject(p, tc)
		}
	}
	return compactArgs(args)
}

// RuleSubjects asks the typed tool when it implements
// TypedMultiRuleSubjecter[P], and otherwise returns no parts (the whole
// subject alone).
func (b *bridge[P]) RuleSubjects(args json.RawMessage, tc *Context) Subjects {
	if rs, ok := b.t.(TypedMultiRuleSubjecter[P]); ok {
		if p, err := b.parse(args); err == nil {
			return rs.RuleSubjects(p, tc)
		}
	}
	return Subjects{}
}

// Execute normalises, validates and decodes the arguments, then runs the
// typed tool.
func (b *bridge[P]) Execute(ctx context.Context, args json.RawMessage, tc *Context) (Result, error) {
	p, err := b.parse(args)
	if err != nil {
		var ae ArgumentErrors
		if errors.As(err, &ae) {
			return ErrorResult("invalid arguments for tool %s: %v", b.t.Name(), ae), nil
		}
		return Result{}, err
	}
	if pc, ok := b.t.(Prechecker[P]); ok {
		if err := pc.Precheck(p); err != nil {
			return ErrorResult("tool %s rejected the call: %v", b.t.Name(), err), nil
		}
	}
	if tc == nil {
		tc = &Context{}
	}
	return b.t.Execute(ctx, p, tc)
}

// parse turns raw arguments into P (see Decoder.Decode).
func (b *bridge[P]) parse(args json.RawMessage) (P, error) { return b.dec.Decode(args) }

// compactArgs renders arguments as compact JSON ("{}" when empty), the
// default subject of permission rules.
func compactArgs(args json.RawMessage) string {
	doc, err := parseArguments(args)
	if err != nil {
		return string(args)
	}
	b, err := marshalSorted(doc)
	if err != nil {
		return string(args)
	}
	return string(b)
}
