package toolsys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ErrRecursiveSchema is returned (wrapped in a *SchemaError) when a schema
// refers to itself, as a recursive Go type does. LLM APIs want a flat schema
// without references, so a recursive type cannot be described to them.
var ErrRecursiveSchema = errors.New("recursive type")

// ErrNotStrict is returned (wrapped in a *SchemaError) by StrictSchema when a
// schema uses a construct OpenAI's strict mode cannot express, such as an
// object with free-form keys (a Go map).
var ErrNotStrict = errors.New("not expressible in strict mode")

// SchemaError says where in a schema normalisation failed.
type SchemaError struct {
	// Path is a JSON pointer to the offending schema ("" for the root).
	Path string
	Err  error
}

// Error implements error.
func (e *SchemaError) Error() string {
	if e.Path == "" {
		return "schema: " + e.Err.Error()
	}
	return fmt.Sprintf("schema at %s: %v", e.Path, e.Err)
}

// Unwrap returns the underlying error.
func (e *SchemaError) Unwrap() error { return e.Err }

// maxSchemaNodes bounds the size of a schema after references are inlined,
// so that definitions referring to each other many times over cannot blow up
// memory.
const maxSchemaNodes = 20000

// droppedKeywords are removed from every schema object: LLM APIs want a flat
// schema without document metadata or references.
var droppedKeywords = []string{"$schema", "$id", "$anchor", "$comment", "title", "$defs", "definitions"}

// Keywords whose value is a schema, a map of schemas, or a list of schemas.
var (
	schemaValued = []string{
		"items", "additionalProperties", "additionalItems", "not", "if", "then", "else",
		"contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "contentSchema",
	}
	schemaMapValued  = []string{"properties", "patternProperties", "dependentSchemas"}
	schemaListValued = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
)

// NormalizeSchema turns a JSON Schema document into the flat shape LLM APIs
// accept: "$schema", "$id", "title", "$defs" and "definitions" are removed at
// any depth, every "$ref" is replaced by the schema it points to (recursively,
// so a list of nested structs is fully expanded; keywords beside the "$ref",
// such as a field's description, take precedence), and every schema whose
// type is "object" has a "properties" key. Descriptions, enums, defaults,
// bounds, patterns and formats are kept. Property names are never mistaken
// for keywords: a property called "title" stays.
//
// A recursive schema yields a *SchemaError wrapping ErrRecursiveSchema that
// names the type. The root must be a JSON object. The output is deterministic
// (object keys sorted).
func NormalizeSchema(raw json.RawMessage) (json.RawMessage, error) {
	doc, err := decodeJSONNumber(raw)
	if err != nil {
		return nil, &SchemaError{Err: fmt.Errorf("not valid JSON: %w", err)}
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, &SchemaError{Err: fmt.Errorf("root must be a JSON object, got %s", jsonKind(doc))}
	}
	n := &normalizer{root: root}
	out, err := n.schema(root, "")
	if err != nil {
		return nil, err
	}
	return marshalSorted(out)
}

// normalizer inlines references against one root document.
type normalizer struct {
	root  map[string]any
	stack []string // references being expanded, outermost first
	nodes int
}

// schema returns the normalised copy of the schema s found at path.
func (n *normalizer) schema(s any, path string) (any, error) {
	n.nodes++
	if n.nodes > maxSchemaNodes {
		return nil, &SchemaError{Path: path, Err: fmt.Errorf("schema has more than %d nodes once references are inlined", maxSchemaNodes)}
	}
	obj, ok := s.(map[string]any)
	if !ok {
		// true, false, or (invalid but harmless) other values are kept as is.
		return s, nil
	}
	if ref, ok := obj["$ref"]; ok {
		return n.inlineRef(obj, ref, path)
	}
	out := make(map[string]any, len(obj)+1)
	for k, v := range obj {
		if slices.Contains(droppedKeywords, k) {
			continue
		}
		var err error
		switch {
		case slices.Contains(schemaValued, k):
			v, err = n.schemaOrList(v, path+"/"+k)
		case slices.Contains(schemaMapValued, k):
			v, err = n.schemaMap(v, path+"/"+k)
		case slices.Contains(schemaListValued, k):
			v, err = n.schemaList(v, path+"/"+k)
		}
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	if isObjectType(out["type"]) {
		if _, ok := out["properties"]; !ok {
			out["properties"] = map[string]any{}
		}
	}
	return out, nil
}

// inlineRef replaces the reference in obj by the normalised schema it points
// to, with obj's other keywords laid over it.
func (n *normalizer) inlineRef(obj map[string]any, ref any, path string) (any, error) {
	s, ok := ref.(string)
	if !ok {
		return nil, &SchemaError{Path: path, Err: fmt.Errorf("$ref must be a string, got %s", jsonKind(ref))}
	}
	name := refName(s)
	if slices.Contains(n.stack, s) {
		return nil, &SchemaError{Path: path, Err: fmt.Errorf("%w %q refers to itself", ErrRecursiveSchema, name)}
	}
	target, err := n.resolve(s)
	if err != nil {
		return nil, &SchemaError{Path: path, Err: err}
	}
	n.stack = append(n.stack, s)
	inlined, err := n.schema(target, path)
	n.stack = n.stack[:len(n.stack)-1]
	if err != nil {
		return nil, err
	}
	siblings := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "$ref" {
			siblings[k] = v
		}
	}
	if len(siblings) == 0 {
		return inlined, nil
	}
	over, err := n.schema(siblings, path)
	if err != nil {
		return nil, err
	}
	base, ok := inlined.(map[string]any)
	if !ok {
		// A boolean schema with extra keywords: the keywords say more.
		return over, nil
	}
	merged := make(map[string]any, len(base)+len(siblings))
	for k, v := range base {
		merged[k] = v
	}
	for k, v := range over.(map[string]any) {
		if _, written := siblings[k]; written {
			merged[k] = v // only keywords written beside the $ref override the target's
		}
	}
	if _, ok := merged["properties"]; !ok && isObjectType(merged["type"]) {
		merged["properties"] = map[string]any{}
	}
	return merged, nil
}

// resolve follows a local reference ("#", "#/$defs/X", any JSON pointer into
// the root document).
func (n *normalizer) resolve(ref string) (any, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("$ref %q is not local to the document", ref)
	}
	ptr := ref[1:]
	if ptr == "" {
		return n.root, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("$ref %q: anchors are not supported", ref)
	}
	var cur any = n.root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %q does not resolve", ref)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) || strconv.Itoa(i) != tok {
				return nil, fmt.Errorf("$ref %q does not resolve", ref)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	return cur, nil
}

// refName is the last segment of a reference, which reflected schemas name
// after the Go type.
func refName(ref string) string {
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		return ref[i+1:]
	}
	if ref == "#" {
		return "root"
	}
	return ref
}

func (n *normalizer) schemaOrList(v any, path string) (any, error) {
	if _, ok := v.([]any); ok {
		return n.schemaList(v, path)
	}
	return n.schema(v, path)
}

func (n *normalizer) schemaMap(v any, path string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	out := make(map[string]any, len(m))
	for k, s := range m {
		ns, err := n.schema(s, path+"/"+escapePointer(k))
		if err != nil {
			return nil, err
		}
		out[k] = ns
	}
	return out, nil
}

func (n *normalizer) schemaList(v any, path string) (any, error) {
	l, ok := v.([]any)
	if !ok {
		return v, nil
	}
	out := make([]any, len(l))
	for i, s := range l {
		ns, err := n.schema(s, fmt.Sprintf("%s/%d", path, i))
		if err != nil {
			return nil, err
		}
		out[i] = ns
	}
	return out, nil
}

// StrictSchema converts a normalised schema into the form OpenAI's strict
// function calling accepts: every object lists all its properties in
// "required" and has "additionalProperties": false; a property that was
// optional becomes nullable (its type gains "null", its enum gains null, or
// it is wrapped in anyOf with {"type":"null"}); "default" is removed. An
// object with free-form keys (a Go map) cannot be expressed and yields a
// *SchemaError wrapping ErrNotStrict.
//
// A model in strict mode sends null for an optional field it leaves out;
// argument handling drops such nulls before validation, so the same tool
// accepts both forms.
func StrictSchema(normalized json.RawMessage) (json.RawMessage, error) {
	doc, err := decodeJSONNumber(normalized)
	if err != nil {
		return nil, &SchemaError{Err: fmt.Errorf("not valid JSON: %w", err)}
	}
	out, err := strictify(doc, "")
	if err != nil {
		return nil, err
	}
	return marshalSorted(out)
}

func strictify(s any, path string) (any, error) {
	obj, ok := s.(map[string]any)
	if !ok {
		return s, nil
	}
	out := make(map[string]any, len(obj)+2)
	for k, v := range obj {
		if k == "default" {
			continue
		}
		var err error
		switch {
		case k == "properties":
			continue // handled below, with "required"
		case slices.Contains(schemaValued, k):
			if k == "additionalProperties" {
				if b, isBool := v.(bool); !isBool || b {
					return nil, &SchemaError{Path: path, Err: fmt.Errorf("%w: an object with free-form keys", ErrNotStrict)}
				}
			}
			if l, isList := v.([]any); isList {
				v, err = strictList(l, path+"/"+k)
			} else {
				v, err = strictify(v, path+"/"+k)
			}
		case slices.Contains(schemaListValued, k):
			if l, isList := v.([]any); isList {
				v, err = strictList(l, path+"/"+k)
			}
		}
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	props, hasProps := obj["properties"].(map[string]any)
	if !hasProps && !isObjectType(obj["type"]) {
		return out, nil
	}
	required := map[string]bool{}
	if req, ok := obj["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	newProps := make(map[string]any, len(props))
	names := make([]any, 0, len(props))
	for _, name := range sortedKeys(props) {
		p, err := strictify(props[name], path+"/properties/"+escapePointer(name))
		if err != nil {
			return nil, err
		}
		if !required[name] {
			p = nullable(p)
		}
		newProps[name] = p
		names = append(names, name)
	}
	out["properties"] = newProps
	out["required"] = names
	out["additionalProperties"] = false
	return out, nil
}

func strictList(l []any, path string) ([]any, error) {
	out := make([]any, len(l))
	for i, s := range l {
		ns, err := strictify(s, fmt.Sprintf("%s/%d", path, i))
		if err != nil {
			return nil, err
		}
		out[i] = ns
	}
	return out, nil
}

// nullable returns s changed to also accept null.
func nullable(s any) any {
	obj, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	switch t := obj["type"].(type) {
	case string:
		if t == "null" {
			return out
		}
		out["type"] = []any{t, "null"}
	case []any:
		if slices.Contains(t, any("null")) {
			return out
		}
		out["type"] = append(slices.Clone(t), "null")
	default:
		return map[string]any{"anyOf": []any{out, map[string]any{"type": "null"}}}
	}
	if enum, ok := obj["enum"].([]any); ok && !slices.Contains(enum, nil) {
		out["enum"] = append(slices.Clone(enum), nil)
	}
	return out
}

// isObjectType reports whether a "type" value is or includes "object".
func isObjectType(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

// requiredOf returns the top-level "required" names of a normalised schema.
func requiredOf(schema json.RawMessage) []string {
	var s struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil
	}
	return s.Required
}

// decodeJSONNumber decodes one JSON value, keeping numbers exact, and
// rejects trailing data.
func decodeJSONNumber(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the JSON value at offset %d", off)
	}
	return v, nil
}

// marshalSorted encodes v without HTML escaping; map keys come out sorted.
func marshalSorted(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
