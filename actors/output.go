package actors

// This file holds typed structured output: a turn that must end with an
// answer matching a JSON Schema, reflected from a Go struct (SubmitAs,
// StreamAs) or given as a document (WithOutputSchema).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// DefaultOutputRetries is how many times an answer that does not match
// its schema is sent back to the model when WithOutputRetries is not
// given.
const DefaultOutputRetries = 1

// ErrNoOutput is returned by SubmitAs and TypedStream.Result for a turn
// that ended without a structured answer: it was cancelled, failed for
// another reason than its answer, or hit a limit.
var ErrNoOutput = errors.New("actors: the turn ended without a structured answer")

// ErrInvalidOutput marks an *OutputError: errors.Is(err, ErrInvalidOutput)
// holds for it.
var ErrInvalidOutput = errors.New("actors: the structured answer does not match its schema")

// OutputError says that a turn's answer did not match its schema, after
// the corrections it was allowed. Raw is the model's last answer as it
// wrote it (a reply's text, or the answer tool's arguments), Problem what
// is wrong with it, naming the fields.
type OutputError struct {
	Session string
	Turn    int
	Raw     string
	Problem string
}

// Error implements error.
func (e *OutputError) Error() string {
	return fmt.Sprintf("actors: session %s turn %d: the answer does not match the output schema: %s", e.Session, e.Turn, e.Problem)
}

// Is reports whether target is ErrInvalidOutput.
func (e *OutputError) Is(target error) bool { return target == ErrInvalidOutput }

// WithOutputSchema makes the turn end with a JSON object matching schema,
// named name to the provider: its TurnResult.Output (and the TurnEnded
// event's) holds the checked answer. The schema is normalised as typed
// tools' schemas are (see toolsys.NormalizeSchema) and sent strict when it
// can be (see toolsys.StrictSchema). Its root must be an object schema. A
// schema that is not valid fails the submission with an error wrapping
// ErrConfig, before anything is journaled. SubmitAs and StreamAs set it
// from their type.
func WithOutputSchema(name string, schema json.RawMessage) SubmitOption {
	return func(o *submitOptions) {
		o.output = &outputOptions{name: name, raw: schema}
	}
}

// WithOutputMode chooses how the turn's structured answer is asked for,
// over the agent's and the provider's setting (see
// Config.StructuredOutput). Zero keeps theirs.
func WithOutputMode(mode messages.OutputMode) SubmitOption {
	return func(o *submitOptions) { o.outputMode = mode }
}

// WithOutputRetries sets how many times an answer that does not match the
// schema is sent back to the model, with the problem, before the turn
// fails with an *OutputError. Zero sends none back; without this option
// the runtime's DefaultOutputRetries applies.
func WithOutputRetries(n int) SubmitOption {
	return func(o *submitOptions) { o.outputRetries = &n }
}

// outputOptions is the structured answer a submission asks for.
type outputOptions struct {
	name string
	raw  json.RawMessage // the schema as given, for WithOutputSchema
	// typed is set by SubmitAs and StreamAs; it wins over raw.
	typed outputChecker
}

// outputChecker checks an answer and returns it in canonical form.
type outputChecker interface {
	schema() json.RawMessage
	check(raw json.RawMessage) (json.RawMessage, error)
}

// schemaChecker checks answers against a schema document.
type schemaChecker struct {
	normalized json.RawMessage
	v          *toolsys.Validator
}

func newSchemaChecker(schema json.RawMessage) (*schemaChecker, error) {
	norm, err := toolsys.NormalizeSchema(schema)
	if err != nil {
		return nil, err
	}
	var root struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(norm, &root); err != nil || root.Type != "object" {
		return nil, fmt.Errorf("the root of the schema must have \"type\": \"object\", got %v", root.Type)
	}
	v, err := toolsys.CompileSchema(norm)
	if err != nil {
		return nil, err
	}
	return &schemaChecker{normalized: norm, v: v}, nil
}

func (c *schemaChecker) schema() json.RawMessage { return c.normalized }

func (c *schemaChecker) check(raw json.RawMessage) (json.RawMessage, error) {
	doc, err := canonicalAnswer(raw)
	if err != nil {
		return nil, err
	}
	if err := c.v.Validate(doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// typedChecker checks answers by decoding them into T.
type typedChecker[T any] struct{ dec *toolsys.Decoder[T] }

func (c typedChecker[T]) schema() json.RawMessage { return c.dec.Schema() }

func (c typedChecker[T]) check(raw json.RawMessage) (json.RawMessage, error) {
	doc, err := canonicalAnswer(raw)
	if err != nil {
		return nil, err
	}
	if _, err := c.dec.Decode(doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// decoderFor returns the runtime's decoder of T, reflecting T's schema the
// first time only.
func decoderFor[T any](rt *Runtime) (*toolsys.Decoder[T], error) {
	key := reflect.TypeFor[T]()
	if d, ok := rt.outputTypes.Load(key); ok {
		return d.(*toolsys.Decoder[T]), nil
	}
	d, err := toolsys.NewDecoder[T]()
	if err != nil {
		return nil, fmt.Errorf("%w: output type: %w", ErrConfig, err)
	}
	actual, _ := rt.outputTypes.LoadOrStore(key, d)
	return actual.(*toolsys.Decoder[T]), nil
}

// SubmitAs runs input as a turn that must end with a T, and returns it
// decoded. T must be a struct (or a pointer to one): its JSON Schema is
// reflected once per runtime, as a typed tool's parameters are, and the
// answer is checked and decoded with the same field-naming errors. How the
// answer is asked for follows WithOutputMode, the agent's
// AgentProfile.Output and Config.StructuredOutput: response_format
// json_schema (strict when the schema allows it), or an answer tool whose
// parameters are T. An answer that does not match is sent back to the
// model with the problem (WithOutputRetries times), then the turn fails
// with an *OutputError carrying the raw answer. The checked answer is
// journaled with the turn: a resubmission of its turn id (WithTurnID)
// returns the same value without asking the model again.
//
// A turn that ends without an answer (cancelled, a limit, a provider
// failure) returns its result and an error: a *TurnError for a failed or
// cancelled turn, ErrNoOutput for one stopped by a limit.
func SubmitAs[T any](ctx context.Context, s *Session, input messages.Message, opts ...SubmitOption) (T, *TurnResult, error) {
	ts := StreamAs[T](ctx, s, input, opts...)
	for _, err := range ts.Events() {
		if err != nil {
			break
		}
	}
	return ts.Result()
}

// TypedStream is a typed turn being streamed (see StreamAs).
type TypedStream[T any] struct {
	s      *Session
	events iter.Seq2[messages.Event, error]
	col    turnCollector
	err    error
	done   bool
}

// StreamAs is the streaming twin of SubmitAs: range over Events for the
// turn's events as Session.Stream yields them, then call Result.
func StreamAs[T any](ctx context.Context, s *Session, input messages.Message, opts ...SubmitOption) *TypedStream[T] {
	ts := &TypedStream[T]{s: s, col: turnCollector{res: &TurnResult{Session: s.id}}}
	dec, err := decoderFor[T](s.rt)
	if err != nil {
		ts.err = err
		return ts
	}
	name := reflect.TypeFor[T]().Name()
	for t := reflect.TypeFor[T](); name == "" && t.Kind() == reflect.Pointer; t = t.Elem() {
		name = t.Elem().Name()
	}
	opts = append(opts, func(o *submitOptions) {
		o.output = &outputOptions{name: outputName(name), typed: typedChecker[T]{dec: dec}}
	})
	ts.events = s.Stream(ctx, input, opts...)
	return ts
}

// Events yields the turn's events, as Session.Stream does; its TurnEnded
// carries the checked answer as JSON. It can be ranged over once.
func (ts *TypedStream[T]) Events() iter.Seq2[messages.Event, error] {
	return func(yield func(messages.Event, error) bool) {
		if ts.err != nil || ts.events == nil {
			if ts.err != nil {
				yield(nil, ts.err)
			}
			return
		}
		events := ts.events
		ts.events = nil
		for ev, err := range events {
			if err != nil {
				ts.err = err
				yield(nil, err)
				return
			}
			if end, err := ts.col.add(ev); end {
				ts.done, ts.err = true, err
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Result returns the decoded answer and how the turn ended, once Events
// has yielded TurnEnded. A stream that stopped earlier returns its error
// (ErrSlowSubscriber when it had none).
func (ts *TypedStream[T]) Result() (T, *TurnResult, error) {
	var zero T
	switch {
	case !ts.done && ts.err != nil:
		return zero, nil, ts.err
	case !ts.done:
		return zero, nil, ErrSlowSubscriber
	}
	res := ts.col.res
	if f := res.OutputFailure; f != nil {
		return zero, res, &OutputError{Session: res.Session, Turn: res.Turn, Raw: f.Raw, Problem: f.Problem}
	}
	if ts.err != nil {
		return zero, res, ts.err
	}
	if res.Output == nil {
		return zero, res, fmt.Errorf("%w (%s: %s)", ErrNoOutput, res.Outcome, res.Reason)
	}
	dec, err := decoderFor[T](ts.s.rt)
	if err != nil {
		return zero, res, err
	}
	v, err := dec.Decode(res.Output)
	if err != nil {
		return zero, res, &OutputError{Session: res.Session, Turn: res.Turn, Raw: string(res.Output), Problem: err.Error()}
	}
	return v, res, nil
}

// outputName makes name fit the provider's rule for schema names
// (letters, digits, '_' and '-', at most 64), "output" when nothing is
// left.
func outputName(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name) && len(b) < 64; i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "output"
	}
	return string(b)
}
