package cluster

// This file holds the wire format of every message that crosses members:
// one envelope, a type name and the message as JSON, carried in the
// protobuf well-known type google.protobuf.Any (type_url = the name,
// value = the JSON), which protoactor's remote layer serialises as any
// other protobuf message.

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"google.golang.org/protobuf/types/known/anypb"
)

// MaxEnvelope is the largest JSON body an envelope may carry (4 MiB):
// Encode refuses a larger message and Decode a larger body.
const MaxEnvelope = 4 << 20

// ErrWire is wrapped by every error Encode and Decode return.
var ErrWire = errors.New("cluster: wire")

// Unknown is what Decode returns for an envelope whose type the registry
// does not know (a newer member's message, or garbage): the type name and
// the raw body, never a panic or an error, so that a member running an
// older version keeps its connection and answers that it does not know
// the type.
type Unknown struct {
	Type string
	JSON []byte
}

// Registry maps wire type names ("agcore.SubmitTurn.v1") to Go types and
// back. Register every type before the registry is used; it is then safe
// for concurrent use.
type Registry struct {
	byName map[string]reflect.Type
	byType map[reflect.Type]string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: make(map[string]reflect.Type), byType: make(map[reflect.Type]string)}
}

// Register maps name to T, a struct type sent as *T. It panics when name
// or T is registered already or name is empty: both are programming errors
// found at start-up.
func Register[T any](r *Registry, name string) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("cluster: Register %q: %v is not a struct type", name, t))
	}
	if name == "" {
		panic(fmt.Sprintf("cluster: Register %v: empty name", t))
	}
	if _, dup := r.byName[name]; dup {
		panic(fmt.Sprintf("cluster: Register: name %q registered twice", name))
	}
	if _, dup := r.byType[t]; dup {
		panic(fmt.Sprintf("cluster: Register %q: type %v registered twice", name, t))
	}
	r.byName[name], r.byType[t] = t, name
}

// Name returns the wire name of v (a *T of a registered T).
func (r *Registry) Name(v any) (string, bool) {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return "", false
	}
	name, ok := r.byType[t.Elem()]
	return name, ok
}

// Encode wraps v, a *T of a registered T, into an envelope.
func (r *Registry) Encode(v any) (*anypb.Any, error) {
	name, ok := r.Name(v)
	if !ok {
		return nil, fmt.Errorf("%w: encode %T: type not registered", ErrWire, v)
	}
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: encode %s: %w", ErrWire, name, err)
	}
	if len(body) > MaxEnvelope {
		return nil, fmt.Errorf("%w: encode %s: %d bytes, more than MaxEnvelope (%d)", ErrWire, name, len(body), MaxEnvelope)
	}
	return &anypb.Any{TypeUrl: name, Value: body}, nil
}

// Decode unwraps an envelope into a *T of the registered T its type names.
// An unregistered type decodes to *Unknown with a nil error. A registered
// type whose body is not its JSON, or a body over MaxEnvelope, is an error
// wrapping ErrWire that names the type.
func (r *Registry) Decode(env *anypb.Any) (any, error) {
	if env == nil {
		return nil, fmt.Errorf("%w: decode: nil envelope", ErrWire)
	}
	if len(env.GetValue()) > MaxEnvelope {
		return nil, fmt.Errorf("%w: decode %q: %d bytes, more than MaxEnvelope (%d)", ErrWire, env.GetTypeUrl(), len(env.GetValue()), MaxEnvelope)
	}
	t, ok := r.byName[env.GetTypeUrl()]
	if !ok {
		return &Unknown{Type: env.GetTypeUrl(), JSON: env.GetValue()}, nil
	}
	v := reflect.New(t)
	if err := json.Unmarshal(env.GetValue(), v.Interface()); err != nil {
		return nil, fmt.Errorf("%w: decode %s: %w", ErrWire, env.GetTypeUrl(), err)
	}
	return v.Interface(), nil
}
