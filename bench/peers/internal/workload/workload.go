package workload

import (
	"errors"
	"fmt"
	"strings"
)

// The fixed parts of a turn.
const (
	// ToolName is the name of the one tool every peer registers.
	ToolName = "lookup"
	// ToolDescription is what the tool tells the model.
	ToolDescription = "Look up the value stored under a key."
	// Key is the key the model asks for.
	Key = "alpha"
	// Arguments is the argument JSON the model sends.
	Arguments = `{"key":"alpha"}`
	// Prompt is the user message that opens a turn.
	Prompt = "What is the value of alpha? Use the lookup tool."
	// SystemPrompt is the instruction peers that take one are given.
	SystemPrompt = "You are a helpful assistant."
	// Model is the model name sent with every request.
	Model = "scripted"
)

// ErrWrongAnswer is wrapped by CheckAnswer's error for an answer that does
// not quote the tool result.
var ErrWrongAnswer = errors.New("workload: the answer does not quote the tool result")

// Lookup is the tool: the value stored under key.
func Lookup(key string) string { return "value-of-" + key }

// Result is what the tool returns for Key, and what the final answer must
// quote.
func Result() string { return Lookup(Key) }

// Answer is the final text the mock model replies with.
func Answer() string { return "The value of alpha is " + Result() + "." }

// CheckAnswer returns nil when text, a turn's final answer, quotes the
// tool result, and an error wrapping ErrWrongAnswer otherwise.
func CheckAnswer(text string) error {
	if !strings.Contains(text, Result()) {
		return fmt.Errorf("%w: got %q", ErrWrongAnswer, text)
	}
	return nil
}

// ToolSchema is the JSON Schema of the tool's arguments, for peers that
// take it as text.
const ToolSchema = `{"type":"object","properties":{"key":{"type":"string","description":"The key to look up."}},"required":["key"]}`

// MaxSteps bounds the model calls of a turn in the peers that loop
// themselves; a turn needs two.
const MaxSteps = 4

// ErrTooManySteps is returned by a turn that made MaxSteps model calls
// without an answer.
var ErrTooManySteps = errors.New("workload: no answer within the step limit")

// Args is the tool's argument object.
type Args struct {
	// Key is the key to look up.
	Key string `json:"key" jsonschema:"description=The key to look up."`
}
