package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/agcore/agcore/messages"
)

//go:generate go test -run=^TestOpenAPIComments$ -update .

// schemaRefPrefix is where the document keeps its schemas.
const schemaRefPrefix = "#/components/schemas/"

// rawSchema is a schema written by hand, used as it is.
type rawSchema map[string]any

// schemaSet reflects Go types into the component schemas of the OpenAPI
// document, so that the schemas are those of the types the handlers encode
// and decode. A response type's fields are required unless they are
// omitempty or omitzero, as encoding/json writes them; a request type's
// fields are optional unless tagged jsonschema:"required", as decodeBody
// reads them. Objects admit no other property, in both directions.
type schemaSet struct {
	response, request *jsonschema.Reflector
	// schemas are the component schemas by name, as JSON.
	schemas map[string]json.RawMessage
	// owners are the Go types of the schemas, to detect two types that
	// would share a name.
	owners map[string]reflect.Type
}

// newSchemaSet returns an empty set whose schemas are described by
// comment, which returns the doc comment of a type (field "") or of one of
// its fields.
func newSchemaSet(comment func(t reflect.Type, field string) string) *schemaSet {
	ss := &schemaSet{schemas: map[string]json.RawMessage{}, owners: map[string]reflect.Type{}}
	ss.response = &jsonschema.Reflector{Anonymous: true, ExpandedStruct: true, Mapper: mapSchema, LookupComment: comment}
	ss.request = &jsonschema.Reflector{Anonymous: true, ExpandedStruct: true, Mapper: mapSchema, LookupComment: comment,
		RequiredFromJSONSchemaTags: true}
	return ss
}

// commentKey names a type ("github.com/agcore/agcore/messages.Usage") or
// one of its fields ("...messages.Usage.PromptTokens") in goComments.
func commentKey(t reflect.Type, field string) string {
	k := t.PkgPath() + "." + t.Name()
	if field != "" {
		k += "." + field
	}
	return k
}

// docComment returns the doc comment of t or of its field, from
// goComments.
func docComment(comments map[string]string) func(reflect.Type, string) string {
	return func(t reflect.Type, field string) string { return comments[commentKey(t, field)] }
}

// responseRef returns the schema of the response body v, a reference to
// the component of v's type.
func (ss *schemaSet) responseRef(v any) (any, error) {
	if raw, ok := v.(rawSchema); ok {
		return raw, nil
	}
	return ss.add(ss.response, reflect.TypeOf(v))
}

// requestRef returns the schema of the request body v: a reference to the
// component of v's type, or the schema itself for an anonymous type.
func (ss *schemaSet) requestRef(v any) (any, error) {
	return ss.add(ss.request, reflect.TypeOf(v))
}

// add reflects t and the types it uses into components. It returns a
// reference to t's component, or t's schema for an unnamed type.
func (ss *schemaSet) add(r *jsonschema.Reflector, t reflect.Type) (any, error) {
	s := r.ReflectFromType(t)
	defs := s.Definitions
	s.Definitions, s.Version, s.ID = nil, "", ""
	for name, def := range defs {
		if err := ss.put(name, nil, def); err != nil {
			return nil, err
		}
	}
	if t.Name() == "" {
		return componentJSON(s)
	}
	if err := ss.put(t.Name(), t, s); err != nil {
		return nil, err
	}
	return ref(t.Name()), nil
}

// put stores the component schema name. t is its Go type when known; a
// name stored twice must have the same schema, and the same type.
func (ss *schemaSet) put(name string, t reflect.Type, s any) error {
	raw, err := componentJSON(s)
	if err != nil {
		return fmt.Errorf("schema %s: %w", name, err)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Errorf("schema %s: %w", name, err)
	}
	if old, ok := ss.schemas[name]; ok && !bytes.Equal(old, b) {
		return fmt.Errorf("two schemas are named %s: rename one of the Go types", name)
	}
	if t != nil {
		if owner, ok := ss.owners[name]; ok && owner != t {
			return fmt.Errorf("schema %s: both %v and %v are named %s", name, owner, t, name)
		}
		ss.owners[name] = t
	}
	ss.schemas[name] = b
	return nil
}

// putRaw stores a schema written by hand.
func (ss *schemaSet) putRaw(name string, s rawSchema) error {
	return ss.put(name, nil, s)
}

// componentJSON returns s as generic JSON whose references to $defs point
// at the document's components instead.
func componentJSON(s any) (any, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	rewriteRefs(v)
	return v, nil
}

func rewriteRefs(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				if name, ok := strings.CutPrefix(s, "#/$defs/"); ok {
					v[k] = schemaRefPrefix + name
				}
				continue
			}
			rewriteRefs(x)
		}
	case []any:
		for _, x := range v {
			rewriteRefs(x)
		}
	}
}

// ref returns a reference to the component schema name.
func ref(name string) rawSchema { return rawSchema{"$ref": schemaRefPrefix + name} }

// mapSchema gives the schemas of the types whose JSON form reflection
// cannot see: messages.Content marshals itself, and the string types
// of fixed values get their values.
func mapSchema(t reflect.Type) *jsonschema.Schema {
	enum := func(values ...any) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Enum: values} }
	switch t {
	case reflect.TypeFor[messages.Content]():
		return &jsonschema.Schema{
			Description: "The content of a message: a string when it is one text part, an array of parts otherwise, null when empty.",
			AnyOf: []*jsonschema.Schema{
				{Type: "string"},
				{Type: "array", Items: &jsonschema.Schema{Ref: "#/$defs/Part"}},
				{Type: "null"},
			},
		}
	case reflect.TypeFor[messages.TurnOutcome]():
		return enum(messages.OutcomeCompleted, messages.OutcomeCancelled, messages.OutcomeFailed, messages.OutcomeLimit)
	case reflect.TypeFor[messages.FinishReason]():
		return enum(messages.FinishStop, messages.FinishLength, messages.FinishToolCalls, messages.FinishContentFilter, messages.FinishOther)
	case reflect.TypeFor[messages.Role]():
		return enum(messages.RoleSystem, messages.RoleDeveloper, messages.RoleUser, messages.RoleAssistant, messages.RoleTool)
	case reflect.TypeFor[messages.PartType]():
		return enum(messages.PartText, messages.PartImageURL, messages.PartInputAudio, messages.PartFile)
	case reflect.TypeFor[messages.OutputMode]():
		return enum(messages.OutputJSONSchema, messages.OutputAnswerTool)
	case reflect.TypeFor[messages.ImageDetail]():
		return enum(messages.ImageDetailAuto, messages.ImageDetailLow, messages.ImageDetailHigh)
	}
	return nil
}
