package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// contact is the structured answer of these tests.
type contact struct {
	Name  string `json:"name" jsonschema:"description=Full name"`
	Email string `json:"email"`
	Age   int    `json:"age,omitempty" jsonschema:"minimum=0"`
}

const adaJSON = `{"name":"Ada Lovelace","email":"ada@example.org","age":36}`

var ada = contact{Name: "Ada Lovelace", Email: "ada@example.org", Age: 36}

// answerCall is a reply that calls the answer tool with args.
func answerCall(args string) scripted.Reply {
	return scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: messages.AnswerTool, Arguments: args}}}
}

// turnEnds returns the TurnCompleted entries of a session's journal.
func turnEnds(t *testing.T, j memory.Journal, session string) []messages.TurnCompleted {
	t.Helper()
	var out []messages.TurnCompleted
	for e, err := range j.Read(t.Context(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := e.Event.(messages.TurnCompleted); ok {
			out = append(out, tc)
		}
	}
	return out
}

func strictSchemaOf[T any](t *testing.T) json.RawMessage {
	t.Helper()
	s, err := toolsys.ReflectSchema[T]()
	if err != nil {
		t.Fatal(err)
	}
	strict, err := toolsys.StrictSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	return strict
}

// TestSubmitAs_ResponseFormat: T's strict schema is sent as response_format
// json_schema, and the reply is decoded into T and journaled with the turn.
func TestSubmitAs_ResponseFormat(t *testing.T) {
	g := newGoldenRun(t, nil, textScript(adaJSON), nil, nil)
	sess, err := g.rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	got, res, err := actors.SubmitAs[contact](t.Context(), sess, messages.UserText("Who wrote the first program?"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ada, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	reqs := g.prov.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	want := &messages.ResponseFormat{Type: messages.ResponseJSONSchema, Name: "contact", Schema: strictSchemaOf[contact](t), Strict: true}
	if diff := cmp.Diff(want, reqs[0].ResponseFormat); diff != "" {
		t.Errorf("response_format (-want +got):\n%s", diff)
	}
	if len(reqs[0].Tools) != 0 {
		t.Errorf("tools offered %v, want none in json_schema mode", reqs[0].Tools)
	}
	ends := turnEnds(t, g.j, "s")
	if len(ends) != 1 || string(ends[0].Output) != string(res.Output) || res.Output == nil {
		t.Errorf("journaled output %v, result output %s", ends, res.Output)
	}
}

// TestSubmitAs_AnswerTool: a model that cannot do JSON-schema output is
// offered an answer tool whose parameters are T, and ends the turn by
// calling it, after using another tool.
func TestSubmitAs_AnswerTool(t *testing.T) {
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "lookup", Arguments: `{"q":"ada"}`}}}},
		{Match: scripted.Match{Tool: "lookup"}, Reply: answerCall(`{"name":"Ada Lovelace","email":"ada@example.org","age":36}`)},
	}}
	tests := []struct {
		name string
		mod  func(*actors.Config)
	}{
		{"per provider", func(c *actors.Config) {
			reg := &providers.Registry{}
			if err := reg.Register("local", c.Provider); err != nil {
				t.Fatal(err)
			}
			c.Providers, c.Provider, c.Model = reg, nil, "local/small"
			c.StructuredOutput = map[string]messages.OutputMode{"local": messages.OutputAnswerTool}
		}},
		{"per model reference", func(c *actors.Config) {
			reg := &providers.Registry{}
			if err := reg.Register("local", c.Provider); err != nil {
				t.Fatal(err)
			}
			c.Providers, c.Provider, c.Model = reg, nil, "local/small"
			c.StructuredOutput = map[string]messages.OutputMode{"local": messages.OutputJSONSchema, "local/small": messages.OutputAnswerTool}
		}},
		{"per agent", func(c *actors.Config) {
			c.Agents = []actors.AgentProfile{{Name: "extractor", Output: messages.OutputAnswerTool}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGoldenRun(t, nil, script, []toolsys.Tool{echoTool("lookup")}, tt.mod)
			sess, err := g.rt.Open(t.Context(), "s")
			if err != nil {
				t.Fatal(err)
			}
			got, res, err := actors.SubmitAs[contact](t.Context(), sess, messages.UserText("Find Ada"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ada, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			reqs := g.prov.requests()
			if len(reqs) != 2 || res.RoundTrips != 2 {
				t.Fatalf("%d model requests (%d round trips), want 2: the answer call ends the turn", len(reqs), res.RoundTrips)
			}
			for i, r := range reqs {
				if r.ResponseFormat != nil {
					t.Errorf("request %d has response_format %+v, want none in answer_tool mode", i, r.ResponseFormat)
				}
				var answer *messages.ToolDefinition
				for k := range r.Tools {
					if r.Tools[k].Name == messages.AnswerTool {
						answer = &r.Tools[k]
					}
				}
				if answer == nil {
					t.Fatalf("request %d offers no %s tool: %v", i, messages.AnswerTool, r.Tools)
				}
				if string(answer.Parameters) != string(strictSchemaOf[contact](t)) || !answer.Strict {
					t.Errorf("answer tool parameters %s (strict %v), want T's strict schema", answer.Parameters, answer.Strict)
				}
				if r.ToolChoice == nil || r.ToolChoice.Mode != messages.ToolChoiceRequired {
					t.Errorf("request %d tool_choice %+v, want required", i, r.ToolChoice)
				}
			}
			// The answer call is answered in the history, so the next
			// turn's conversation is well formed.
			_, _ = sess.Submit(t.Context(), messages.UserText("thanks"))
			if reqs := g.prov.requests(); len(reqs) < 3 {
				t.Errorf("the next turn asked no model")
			} else if err := messages.Validate(reqs[2].Messages); err != nil {
				t.Errorf("next turn's messages: %v", err)
			}
		})
	}
}

// correctionScripts answer first with bad, then, once the problem is sent
// back, with good: in json_schema mode as text, in answer_tool mode as an
// answer call.
func correctionScript(mode messages.OutputMode, bad, good string) scripted.Script {
	if mode == messages.OutputAnswerTool {
		return scripted.Script{Rules: []scripted.Rule{
			{Match: scripted.Match{Role: messages.RoleUser}, Reply: answerCall(bad)},
			{Match: scripted.Match{Tool: messages.AnswerTool}, Reply: answerCall(good)},
		}}
	}
	return scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Contains: "does not match the required JSON schema"}, Reply: scripted.Reply{Text: good}},
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{Text: bad}},
	}}
}

// TestSubmitAs_MalformedAnswerCorrected: an answer that does not match is
// sent back once with the problem, naming the field, and the corrected
// answer ends the turn.
func TestSubmitAs_MalformedAnswerCorrected(t *testing.T) {
	for _, mode := range []messages.OutputMode{messages.OutputJSONSchema, messages.OutputAnswerTool} {
		t.Run(string(mode), func(t *testing.T) {
			g := newGoldenRun(t, nil, correctionScript(mode, `{"name":"Ada Lovelace","email":36}`, adaJSON), nil, nil)
			sess, err := g.rt.Open(t.Context(), "s")
			if err != nil {
				t.Fatal(err)
			}
			ts := actors.StreamAs[contact](t.Context(), sess, messages.UserText("Extract the contact"), actors.WithOutputMode(mode))
			var problems []string
			for ev, err := range ts.Events() {
				if err != nil {
					t.Fatal(err)
				}
				if e, ok := ev.(messages.ErrorEvent); ok && e.Kind == "invalid_output" {
					problems = append(problems, e.Message)
				}
			}
			got, res, err := ts.Result()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ada, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if res.Outcome != messages.OutcomeCompleted {
				t.Errorf("outcome %s, want completed", res.Outcome)
			}
			reqs := g.prov.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2 (the answer, the correction)", len(reqs))
			}
			sent := reqs[1].Messages[len(reqs[1].Messages)-1].Text()
			const problem = `field "email": expected string, got number 36`
			if !strings.Contains(sent, problem) {
				t.Errorf("the model was sent %q, want the problem %q", sent, problem)
			}
			if len(problems) != 1 || !strings.Contains(problems[0], problem) {
				t.Errorf("invalid_output events %q, want one naming the field", problems)
			}
		})
	}
}

// TestSubmitAs_StaysMalformed: an answer that is still wrong after its
// corrections fails the turn with an *OutputError carrying the raw
// answer; the number of corrections is configurable, and the failure is
// journaled.
func TestSubmitAs_StaysMalformed(t *testing.T) {
	const bad = `{"name":"Ada Lovelace"}`
	tests := []struct {
		mode      messages.OutputMode
		opts      []actors.SubmitOption
		wantCalls int
	}{
		{messages.OutputJSONSchema, nil, 2},
		{messages.OutputJSONSchema, []actors.SubmitOption{actors.WithOutputRetries(0)}, 1},
		{messages.OutputJSONSchema, []actors.SubmitOption{actors.WithOutputRetries(3)}, 4},
		{messages.OutputAnswerTool, nil, 2},
		{messages.OutputAnswerTool, []actors.SubmitOption{actors.WithOutputRetries(2)}, 3},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			g := newGoldenRun(t, nil, correctionScript(tt.mode, bad, bad), nil, nil)
			sess, err := g.rt.Open(t.Context(), "s")
			if err != nil {
				t.Fatal(err)
			}
			opts := append([]actors.SubmitOption{actors.WithOutputMode(tt.mode)}, tt.opts...)
			got, res, err := actors.SubmitAs[contact](t.Context(), sess, messages.UserText("Extract the contact"), opts...)
			var oe *actors.OutputError
			if !errors.As(err, &oe) || !errors.Is(err, actors.ErrInvalidOutput) {
				t.Fatalf("SubmitAs error = %v, want an *OutputError", err)
			}
			if oe.Raw != bad || !strings.Contains(oe.Problem, `field "email": is required but missing`) {
				t.Errorf("OutputError raw %q problem %q", oe.Raw, oe.Problem)
			}
			if got != (contact{}) {
				t.Errorf("answer %+v returned with the error", got)
			}
			if res == nil || res.Outcome != messages.OutcomeFailed || res.Output != nil {
				t.Errorf("result %+v, want a failed turn without output", res)
			}
			if n := len(g.prov.requests()); n != tt.wantCalls {
				t.Errorf("%d model requests, want %d", n, tt.wantCalls)
			}
			ends := turnEnds(t, g.j, "s")
			if len(ends) != 1 || ends[0].OutputFailure == nil || ends[0].OutputFailure.Raw != bad {
				t.Errorf("journaled end %+v, want the output failure with the raw answer", ends)
			}
			// A resubmission reports the same failure, from the journal.
			calls := len(g.prov.requests())
			_, _, err = actors.SubmitAs[contact](t.Context(), sess, messages.UserText("again"), actors.WithTurnID(res.TurnID))
			if !errors.As(err, &oe) || oe.Raw != bad {
				t.Errorf("resubmission error = %v, want the same *OutputError", err)
			}
			if len(g.prov.requests()) != calls {
				t.Errorf("the resubmission asked the model")
			}
		})
	}
}

// TestSubmitAs_ResubmittedTurnReturnsTheJournaledValue: a submission with
// the turn id of a finished typed turn returns its journaled answer
// without asking the model.
func TestSubmitAs_ResubmittedTurnReturnsTheJournaledValue(t *testing.T) {
	g := newGoldenRun(t, nil, textScript(adaJSON), nil, nil)
	sess, err := g.rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := actors.SubmitAs[contact](t.Context(), sess, messages.UserText("extract"), actors.WithTurnID("t-1"))
	if err != nil {
		t.Fatal(err)
	}
	again, res, err := actors.SubmitAs[*contact](t.Context(), sess, messages.UserText("extract"), actors.WithTurnID("t-1"))
	if err != nil {
		t.Fatal(err)
	}
	if again == nil || *again != first || res.Turn != 0 {
		t.Errorf("resubmission = %+v (turn %d), want %+v of turn 0", again, res.Turn, first)
	}
	if n := len(g.prov.requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

// TestSubmitAs_ResumedTurnReturnsTheJournaledValue: a process died after
// the model's answer was journaled and before the turn's end was. The
// session resumes the turn, checks the answer against the journaled
// schema, journals it with the turn's end, and the client's resubmission
// gets it; the model is never asked again.
func TestSubmitAs_ResumedTurnReturnsTheJournaledValue(t *testing.T) {
	ctx := t.Context()
	j := goldenJournal(t)
	schema, err := toolsys.ReflectSchema[contact]()
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.OutputSpec{Name: "contact", Schema: schema, Strict: true, Mode: messages.OutputJSONSchema, Retries: 1}
	act, tail, err := j.Activate(ctx, "s", "crashed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(ctx, "s", act, tail,
		messages.UserMessage{Turn: 0, TurnID: "t-1", Message: messages.UserText("extract"), Output: spec},
		messages.AssistantMessage{Turn: 0, Message: messages.AssistantText(adaJSON), FinishReason: messages.FinishStop},
	); err != nil {
		t.Fatal(err)
	}
	g := newGoldenRun(t, j, textScript("not asked"), nil, nil)
	sess, err := g.rt.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	got, res, err := actors.SubmitAs[contact](ctx, sess, messages.UserText("extract"), actors.WithTurnID("t-1"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ada, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if res.Turn != 0 {
		t.Errorf("turn %d, want 0", res.Turn)
	}
	if n := len(g.prov.requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
	ends := turnEnds(t, j, "s")
	if len(ends) != 1 || string(ends[0].Output) != `{"age":36,"email":"ada@example.org","name":"Ada Lovelace"}` {
		t.Errorf("journaled ends %+v", ends)
	}
}

// TestSubmitAs_ResumedTurnCorrectsAnInvalidAnswer: the journaled answer of
// a resumed turn does not match: it is sent back with its problem.
func TestSubmitAs_ResumedTurnCorrectsAnInvalidAnswer(t *testing.T) {
	ctx := t.Context()
	j := goldenJournal(t)
	schema, err := toolsys.ReflectSchema[contact]()
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.OutputSpec{Name: "contact", Schema: schema, Mode: messages.OutputJSONSchema, Retries: 1}
	act, tail, err := j.Activate(ctx, "s", "crashed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(ctx, "s", act, tail,
		messages.UserMessage{Turn: 0, TurnID: "t-1", Message: messages.UserText("extract"), Output: spec},
		messages.AssistantMessage{Turn: 0, Message: messages.AssistantText(`{"name":"Ada Lovelace"}`), FinishReason: messages.FinishStop},
	); err != nil {
		t.Fatal(err)
	}
	g := newGoldenRun(t, j, textScript(adaJSON), nil, nil)
	sess, err := g.rt.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := actors.SubmitAs[contact](ctx, sess, messages.UserText("extract"), actors.WithTurnID("t-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got != ada {
		t.Errorf("answer %+v, want %+v", got, ada)
	}
	reqs := g.prov.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1 (the correction)", len(reqs))
	}
	if rf := reqs[0].ResponseFormat; rf == nil || rf.Name != "contact" {
		t.Errorf("the resumed turn's request has response_format %+v, want the journaled schema", rf)
	}
	if sent := reqs[0].Messages[len(reqs[0].Messages)-1].Text(); !strings.Contains(sent, `field "email": is required but missing`) {
		t.Errorf("the model was sent %q", sent)
	}
}

// TestWithOutputSchema checks the untyped form: a schema document, the
// answer as JSON in TurnResult.Output.
func TestWithOutputSchema(t *testing.T) {
	g := newGoldenRun(t, nil, textScript("```json\n{\"city\": \"Paris\", \"note\": null}\n```"), nil, nil)
	sess, err := g.rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"city":{"type":"string"},"note":{"type":"string"}},"required":["city"],"additionalProperties":false}`)
	res, err := sess.Submit(t.Context(), messages.UserText("where?"), actors.WithOutputSchema("place", schema))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != `{"city":"Paris"}` {
		t.Errorf("Output = %s, want the fenced answer without its null", res.Output)
	}
	rf := g.prov.requests()[0].ResponseFormat
	if rf == nil || rf.Name != "place" || !rf.Strict || strings.Contains(string(rf.Schema), "$schema") {
		t.Errorf("response_format %+v, want the normalised strict schema named place", rf)
	}
}

// TestOutput_RefusedBeforeAnythingIsJournaled: a submission whose output
// cannot be asked for fails with ErrConfig naming the problem, and its
// message is not journaled.
func TestOutput_RefusedBeforeAnythingIsJournaled(t *testing.T) {
	answerTool := echoTool(messages.AnswerTool)
	tests := []struct {
		name string
		opts []actors.SubmitOption
		want string
	}{
		{"array root", []actors.SubmitOption{actors.WithOutputSchema("x", json.RawMessage(`{"type":"array"}`))}, `"type": "object"`},
		{"not JSON", []actors.SubmitOption{actors.WithOutputSchema("x", json.RawMessage(`{`))}, "not valid JSON"},
		{"unknown mode", []actors.SubmitOption{actors.WithOutputSchema("x", json.RawMessage(`{"type":"object"}`)), actors.WithOutputMode("xml")}, `unknown mode "xml"`},
		{"negative retries", []actors.SubmitOption{actors.WithOutputSchema("x", json.RawMessage(`{"type":"object"}`)), actors.WithOutputRetries(-1)}, "must not be negative"},
		{"answer tool name taken", []actors.SubmitOption{actors.WithOutputSchema("x", json.RawMessage(`{"type":"object"}`)), actors.WithOutputMode(messages.OutputAnswerTool)}, `tool name "answer"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGoldenRun(t, nil, textScript("{}"), []toolsys.Tool{answerTool}, nil)
			sess, err := g.rt.Open(t.Context(), "s")
			if err != nil {
				t.Fatal(err)
			}
			_, err = sess.Submit(t.Context(), messages.UserText("hi"), tt.opts...)
			if !errors.Is(err, actors.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Submit error = %v, want ErrConfig saying %q", err, tt.want)
			}
			if tail, err := g.j.Tail(t.Context(), "s"); err != nil || tail > 1 {
				t.Errorf("journal tail %d (%v), want nothing but the activation", tail, err)
			}
		})
	}
	if _, err := actors.NewInMemory(actors.Config{Provider: scripted.MustNew(textScript("x"), scripted.Options{}),
		StructuredOutput: map[string]messages.OutputMode{"local": "yaml"}}); !errors.Is(err, actors.ErrConfig) || !strings.Contains(err.Error(), `StructuredOutput["local"]`) {
		t.Errorf("NewInMemory with an unknown output mode = %v, want ErrConfig naming the key", err)
	}
	if _, err := actors.NewInMemory(actors.Config{Provider: scripted.MustNew(textScript("x"), scripted.Options{}),
		Agents: []actors.AgentProfile{{Name: "a", Output: "yaml"}}}); !errors.Is(err, actors.ErrConfig) || !strings.Contains(err.Error(), "Agents[0].Output") {
		t.Errorf("NewInMemory with an agent's unknown output mode = %v, want ErrConfig naming the field", err)
	}
}

// TestSubmitAs_NoOutputOnALimit: a turn stopped by a limit before any
// answer returns ErrNoOutput with its result.
func TestSubmitAs_NoOutputOnALimit(t *testing.T) {
	script := toolScript("unused", scripted.ToolCall{Name: "lookup", Arguments: `{}`})
	g := newGoldenRun(t, nil, script, []toolsys.Tool{echoTool("lookup")}, func(c *actors.Config) { c.Limits.MaxRoundTrips = 1 })
	sess, err := g.rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := actors.SubmitAs[contact](context.Background(), sess, messages.UserText("find"))
	if !errors.Is(err, actors.ErrNoOutput) || res == nil || res.Outcome != messages.OutcomeLimit {
		t.Errorf("SubmitAs = %+v, %v; want ErrNoOutput and a limit outcome", res, err)
	}
}

// TestWithOutputSchema_NotStrictWhenItCannotBe: a schema strict mode
// cannot express (free-form keys) is sent as it is, not strict, and still
// checked.
func TestWithOutputSchema_NotStrictWhenItCannotBe(t *testing.T) {
	g := newGoldenRun(t, nil, textScript(`{"labels":{"a":"x"}}`), nil, nil)
	sess, err := g.rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}}},"required":["labels"]}`)
	res, err := sess.Submit(t.Context(), messages.UserText("label it"), actors.WithOutputSchema("labels", schema))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != `{"labels":{"a":"x"}}` {
		t.Errorf("Output = %s", res.Output)
	}
	if rf := g.prov.requests()[0].ResponseFormat; rf == nil || rf.Strict || !strings.Contains(string(rf.Schema), `"additionalProperties":{"type":"string"}`) {
		t.Errorf("response_format %+v, want the schema as it is, not strict", rf)
	}
}

// TestSubmitAs_ResumeDoesNotResetCorrections: a turn that had already sent
// its one correction when the process died, and whose second answer is
// still wrong, fails on resumption without asking the model again.
func TestSubmitAs_ResumeDoesNotResetCorrections(t *testing.T) {
	ctx := t.Context()
	j := goldenJournal(t)
	schema, err := toolsys.ReflectSchema[contact]()
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.OutputSpec{Name: "contact", Schema: schema, Mode: messages.OutputJSONSchema, Retries: 1}
	bad := messages.AssistantMessage{Turn: 0, Message: messages.AssistantText(`{"name":"Ada Lovelace"}`), FinishReason: messages.FinishStop}
	act, tail, err := j.Activate(ctx, "s", "crashed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(ctx, "s", act, tail,
		messages.UserMessage{Turn: 0, TurnID: "t-1", Message: messages.UserText("extract"), Output: spec},
		bad,
		messages.UserMessage{Turn: 0, TurnID: "t-1", Message: messages.UserText("Your answer does not match the required JSON schema: ...")},
		bad,
	); err != nil {
		t.Fatal(err)
	}
	g := newGoldenRun(t, j, textScript(adaJSON), nil, nil)
	sess, err := g.rt.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = actors.SubmitAs[contact](ctx, sess, messages.UserText("extract"), actors.WithTurnID("t-1"))
	var oe *actors.OutputError
	if !errors.As(err, &oe) || oe.Raw != `{"name":"Ada Lovelace"}` {
		t.Fatalf("SubmitAs error = %v, want the *OutputError of the second answer", err)
	}
	if n := len(g.prov.requests()); n != 0 {
		t.Errorf("%d model requests after the resumption, want none: the correction was spent", n)
	}
}
