package actors

// This file holds the session actor's side of structured output: the
// answer a turn must end with is asked of the model (response_format, or
// an answer tool), checked, sent back with its problem a bounded number of
// times, and journaled with the turn's end.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// turnOutput is the structured answer a turn must end with.
type turnOutput struct {
	spec    messages.OutputSpec
	checker outputChecker
	// value is the checked answer; failure why the turn ends without one.
	value   json.RawMessage
	failure *messages.OutputFailure
}

// resolveOutput turns a submission's output options into the turn's
// output, its mode left for the session to choose when o does not set it.
func (o *submitOptions) resolveOutput() (*turnOutput, error) {
	if o.output == nil {
		return nil, nil
	}
	checker := o.output.typed
	if checker == nil {
		c, err := newSchemaChecker(o.output.raw)
		if err != nil {
			return nil, fmt.Errorf("%w: WithOutputSchema: %w", ErrConfig, err)
		}
		checker = c
	}
	switch o.outputMode {
	case "", messages.OutputJSONSchema, messages.OutputAnswerTool:
	default:
		return nil, fmt.Errorf("%w: WithOutputMode: unknown mode %q (want %s or %s)", ErrConfig, o.outputMode, messages.OutputJSONSchema, messages.OutputAnswerTool)
	}
	retries := DefaultOutputRetries
	if o.outputRetries != nil {
		if retries = *o.outputRetries; retries < 0 {
			return nil, fmt.Errorf("%w: WithOutputRetries: must not be negative, got %d", ErrConfig, retries)
		}
	}
	_, strictErr := toolsys.StrictSchema(checker.schema())
	spec := messages.OutputSpec{Name: outputName(o.output.name), Schema: checker.schema(), Strict: strictErr == nil,
		Mode: o.outputMode, Retries: retries}
	return &turnOutput{spec: spec, checker: checker}, nil
}

// validOutputMode checks a configured output mode; zero is valid.
func validOutputMode(m messages.OutputMode) error {
	switch m {
	case "", messages.OutputJSONSchema, messages.OutputAnswerTool:
		return nil
	}
	return fmt.Errorf("unknown output mode %q (want %s or %s)", m, messages.OutputJSONSchema, messages.OutputAnswerTool)
}

// outputMode is how the agent's model is asked for a structured answer:
// the agent's own setting, else Config.StructuredOutput for its model
// reference, then for its provider, else response_format json_schema.
func (rt *Runtime) outputMode(ag *agent) messages.OutputMode {
	if ag.Output != "" {
		return ag.Output
	}
	ref := ag.Model
	if ref == "" {
		ref = rt.cfg.Model
	}
	if m := rt.cfg.StructuredOutput[ref]; m != "" {
		return m
	}
	if name, _, ok := strings.Cut(ref, "/"); ok {
		if m := rt.cfg.StructuredOutput[name]; m != "" {
			return m
		}
	}
	return messages.OutputJSONSchema
}

// prepareOutput completes a submission's output for the session's agent.
// It fails when the answer tool's name is taken by a tool the agent has.
func (a *sessionActor) prepareOutput(out *turnOutput) error {
	if out.spec.Mode == "" {
		out.spec.Mode = a.rt.outputMode(a.agent())
	}
	if out.spec.Mode == messages.OutputAnswerTool {
		if _, taken := a.rt.tools.get(messages.AnswerTool); taken && a.rt.tools.allowed(a.agent(), messages.AnswerTool) {
			return fmt.Errorf("%w: output mode %s needs the tool name %q, which a registered tool has (use %s)",
				ErrConfig, messages.OutputAnswerTool, messages.AnswerTool, messages.OutputJSONSchema)
		}
	}
	return nil
}

// resumeOutput rebuilds the output of a turn resumed from the journal.
func resumeOutput(spec *messages.OutputSpec) (*turnOutput, error) {
	if spec == nil {
		return nil, nil
	}
	c, err := newSchemaChecker(spec.Schema)
	if err != nil {
		return nil, fmt.Errorf("the journaled output schema: %w", err)
	}
	return &turnOutput{spec: *spec, checker: c}, nil
}

// ask sets on req how the turn's answer is asked for.
func (out *turnOutput) ask(req *messages.Request) {
	schema := out.spec.Schema
	if out.spec.Strict {
		if s, err := toolsys.StrictSchema(schema); err == nil {
			schema = s
		}
	}
	switch out.spec.Mode {
	case messages.OutputAnswerTool:
		req.Tools = append(req.Tools, messages.ToolDefinition{Name: messages.AnswerTool,
			Description: "Give your final answer. Calling this tool ends your turn: call it once, alone, when you are done, with the answer as its arguments.",
			Parameters:  schema, Strict: out.spec.Strict})
		if req.ToolChoice == nil {
			req.ToolChoice = &messages.ToolChoice{Mode: messages.ToolChoiceRequired}
		}
	default:
		req.ResponseFormat = &messages.ResponseFormat{Type: messages.ResponseJSONSchema, Name: out.spec.Name,
			Schema: schema, Strict: out.spec.Strict}
	}
}

// takeOutput looks for the turn's answer in a model reply. It reports
// false when the reply's tool calls are to run as usual; otherwise it has
// ended the turn or sent the answer back for a correction.
func (a *sessionActor) takeOutput(msg messages.Message, finish messages.FinishReason) bool {
	t := a.turn
	out := t.output
	if out.spec.Mode == messages.OutputAnswerTool {
		for _, c := range msg.ToolCalls {
			if c.Name == messages.AnswerTool {
				a.takeAnswerCall(msg, c)
				return true
			}
		}
	}
	if len(msg.ToolCalls) > 0 && finish == messages.FinishToolCalls {
		return false
	}
	text := msg.Text()
	value, err := out.checker.check(json.RawMessage(text))
	if err == nil {
		out.value = value
		t.text, t.finish = text, finish
		a.endTurn(messages.OutcomeCompleted, "")
		return true
	}
	problem := err.Error()
	var note string
	if out.spec.Mode == messages.OutputAnswerTool {
		note = fmt.Sprintf("Your reply did not call the %s tool. End your turn by calling %s with your final answer as its arguments.", messages.AnswerTool, messages.AnswerTool)
	} else {
		note = fmt.Sprintf("Your answer does not match the required JSON schema: %s. Reply again with only the corrected JSON object.", problem)
	}
	a.reportOutputProblem(problem)
	if used, spent := a.outputCorrections(); spent {
		a.failOutput(text, problem, used)
		return true
	}
	a.stage(messages.UserMessage{Turn: t.index, TurnID: t.turnID, Message: messages.UserText(note)})
	a.requestModel()
	return true
}

// takeAnswerCall ends the turn with the arguments of an answer tool call,
// or sends them back with their problem. The reply's other calls are not
// run: each gets an error result that says so.
func (a *sessionActor) takeAnswerCall(msg messages.Message, answer messages.ToolCall) {
	t := a.turn
	out := t.output
	value, err := out.checker.check(json.RawMessage(answer.Arguments))
	results := func(answerResult string, isError bool, other string) {
		for _, c := range msg.ToolCalls {
			r := messages.ToolResult{Turn: t.index, CallID: c.ID, Name: c.Name, Content: other, IsError: true}
			if c.ID == answer.ID {
				r.Content, r.IsError = answerResult, isError
			}
			a.stage(r)
		}
	}
	if err == nil {
		results("answer recorded", false, fmt.Sprintf("not run: the %s call in the same reply ended the turn", messages.AnswerTool))
		out.value = value
		t.text, t.finish = msg.Text(), messages.FinishStop
		a.endTurn(messages.OutcomeCompleted, "")
		return
	}
	problem := err.Error()
	used, spent := a.outputCorrections()
	results(fmt.Sprintf("invalid answer: %s. Call %s again with corrected arguments.", problem, messages.AnswerTool), true,
		fmt.Sprintf("not run: a reply that calls %s must call nothing else", messages.AnswerTool))
	a.reportOutputProblem(problem)
	if spent {
		a.failOutput(answer.Arguments, problem, used)
		return
	}
	a.requestModel()
}

// outputCorrections returns how many answers of the turn were sent back
// to the model so far, and whether that spends its corrections.
func (a *sessionActor) outputCorrections() (used int, spent bool) {
	if o := a.st.Open; o != nil {
		used = o.Corrections
	}
	return used, used >= a.turn.output.spec.Retries
}

// failOutput ends the turn as failed: its answer raw still does not match
// after used corrections.
func (a *sessionActor) failOutput(raw, problem string, used int) {
	t := a.turn
	t.output.failure = &messages.OutputFailure{Raw: raw, Problem: problem}
	t.text = raw
	a.endTurn(messages.OutcomeFailed, fmt.Sprintf("the answer does not match the output schema after %d correction(s): %s", used, problem))
}

// reportOutputProblem tells the turn's subscribers that an answer was
// refused.
func (a *sessionActor) reportOutputProblem(problem string) {
	a.publish(messages.ErrorEvent{EventMeta: a.meta(), Message: "the answer does not match the output schema: " + problem, Kind: "invalid_output"})
}
