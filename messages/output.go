package messages

import "encoding/json"

// OutputMode says how a turn's structured answer is asked of the model.
type OutputMode string

// The output modes.
const (
	// OutputJSONSchema sends the schema as response_format json_schema:
	// the model's final reply is the JSON document.
	OutputJSONSchema OutputMode = "json_schema"
	// OutputAnswerTool offers a tool whose parameters are the schema: the
	// model ends the turn by calling it. It works on any tool-calling
	// model.
	OutputAnswerTool OutputMode = "answer_tool"
)

// AnswerTool is the name of the tool a model in OutputAnswerTool mode ends
// its turn with.
const AnswerTool = "answer"

// OutputSpec is the structured answer a turn must end with. It is
// journaled with the turn's UserMessage, so that a turn resumed after a
// crash asks for, and checks, the same answer.
type OutputSpec struct {
	// Name names the schema to the provider (response_format name).
	Name string `json:"name"`
	// Schema is the normalised JSON Schema the answer must match.
	Schema json.RawMessage `json:"schema"`
	// Strict asks the provider to enforce the schema exactly; the schema
	// sent is then its strict form.
	Strict bool `json:"strict,omitempty"`
	// Mode is how the answer is asked for.
	Mode OutputMode `json:"mode"`
	// Retries is how many times an answer that does not match is sent
	// back to the model with the problem before the turn fails.
	Retries int `json:"retries"`
}

// OutputFailure says why a turn's structured answer was refused: Raw is
// the model's last answer as it wrote it, Problem what is wrong with it
// (the fields, named).
type OutputFailure struct {
	Raw     string `json:"raw"`
	Problem string `json:"problem"`
}
