package actors_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

func ptr[T any](v T) *T { return &v }

// TestParams_ReachTheRequest checks that an agent's request parameters are
// set on every model request of its turns, and that a turn's own
// parameters override them field by field for that turn only.
func TestParams_ReachTheRequest(t *testing.T) {
	agentParams := actors.RequestParams{
		Temperature: ptr(0.2), TopP: ptr(0.9), MaxTokens: 512,
		ToolChoice:        &messages.ToolChoice{Mode: messages.ToolChoiceAuto},
		ParallelToolCalls: ptr(false),
		ResponseFormat:    &messages.ResponseFormat{Type: messages.ResponseJSONSchema, Name: "answer", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
		Seed:              ptr(int64(42)), Stop: []string{"</done>"}, ReasoningEffort: "low", User: "ops",
		Metadata: map[string]string{"team": "agents"},
	}
	g := newGoldenRun(t, nil, textScript("ok"), nil, func(c *actors.Config) {
		c.Agents = []actors.AgentProfile{{Name: "a", Params: agentParams}}
	})
	sess, err := g.rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Submit(t.Context(), messages.UserText("first")); err != nil {
		t.Fatal(err)
	}
	turn := actors.RequestParams{Temperature: ptr(1.0), MaxTokens: 64, Metadata: map[string]string{"run": "nightly"}}
	if _, err := sess.Submit(t.Context(), messages.UserText("second"), actors.WithParams(turn)); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Submit(t.Context(), messages.UserText("third")); err != nil {
		t.Fatal(err)
	}
	reqs := g.prov.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	want := func(p actors.RequestParams) messages.Request {
		return messages.Request{Temperature: p.Temperature, TopP: p.TopP, MaxTokens: p.MaxTokens, ToolChoice: p.ToolChoice,
			ParallelToolCalls: p.ParallelToolCalls, ResponseFormat: p.ResponseFormat, Seed: p.Seed, Stop: p.Stop,
			ReasoningEffort: p.ReasoningEffort, User: p.User, Metadata: p.Metadata}
	}
	params := func(r messages.Request) messages.Request {
		r.Model, r.Messages, r.Tools = "", nil, nil
		return r
	}
	merged := agentParams
	merged.Temperature, merged.MaxTokens, merged.Metadata = turn.Temperature, turn.MaxTokens, turn.Metadata
	for i, w := range []actors.RequestParams{agentParams, merged, agentParams} {
		if diff := cmp.Diff(want(w), params(reqs[i])); diff != "" {
			t.Errorf("request %d parameters (-want +got):\n%s", i+1, diff)
		}
	}
}

// TestParams_Invalid checks that bad parameters are refused, naming the
// field: an agent's at New, a turn's at Submit.
func TestParams_Invalid(t *testing.T) {
	tests := []struct {
		name   string
		params actors.RequestParams
		want   string
	}{
		{"temperature", actors.RequestParams{Temperature: ptr(2.5)}, "temperature: must be between 0 and 2, got 2.5"},
		{"top_p", actors.RequestParams{TopP: ptr(0.0)}, "top_p: must be above 0 and at most 1, got 0"},
		{"max_tokens", actors.RequestParams{MaxTokens: -1}, "max_tokens: must not be negative, got -1"},
		{"tool_choice", actors.RequestParams{ToolChoice: &messages.ToolChoice{Mode: "sometimes"}}, `tool_choice: unknown mode "sometimes"`},
		{"tool_choice function", actors.RequestParams{ToolChoice: &messages.ToolChoice{Mode: messages.ToolChoiceFunction}}, "tool_choice: mode function needs a tool name"},
		{"response_format type", actors.RequestParams{ResponseFormat: &messages.ResponseFormat{Type: "xml"}}, `response_format.type: unknown type "xml"`},
		{"response_format schema", actors.RequestParams{ResponseFormat: &messages.ResponseFormat{Type: messages.ResponseJSONSchema, Name: "a"}}, "response_format.schema: required for json_schema"},
		{"response_format bad schema", actors.RequestParams{ResponseFormat: &messages.ResponseFormat{Type: messages.ResponseJSONSchema, Name: "a", Schema: json.RawMessage(`{`)}}, "response_format.schema: not a JSON object"},
		{"response_format name", actors.RequestParams{ResponseFormat: &messages.ResponseFormat{Type: messages.ResponseJSONSchema, Schema: json.RawMessage(`{}`)}}, "response_format.name: required for json_schema"},
		{"response_format strict", actors.RequestParams{ResponseFormat: &messages.ResponseFormat{Type: messages.ResponseJSONObject, Strict: true}}, "response_format.strict: only for json_schema"},
		{"stop", actors.RequestParams{Stop: []string{""}}, "stop[0]: empty"},
		{"reasoning_effort", actors.RequestParams{ReasoningEffort: "max"}, `reasoning_effort: unknown effort "max" (want minimal, low, medium or high)`},
		{"metadata", actors.RequestParams{Metadata: map[string]string{"": "x"}}, "metadata: empty key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := actors.NewInMemory(actors.Config{Provider: scripted.MustNew(textScript("ok"), scripted.Options{}),
				Agents: []actors.AgentProfile{{Name: "a", Params: tt.params}}})
			if !errors.Is(err, actors.ErrConfig) || !strings.Contains(err.Error(), "Agents[0].Params: "+tt.want) {
				t.Errorf("New: %v, want ErrConfig naming Agents[0].Params: %s", err, tt.want)
			}
			var pe *actors.ParamError
			if !errors.As(err, &pe) || !strings.HasPrefix(tt.want, pe.Field+":") {
				t.Errorf("New: %v, want a *ParamError naming the field", err)
			}
			f := newFixture(t, textScript("ok"), nil, nil)
			_, err = f.sess.Submit(t.Context(), messages.UserText("hi"), actors.WithParams(tt.params))
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Submit: %v, want a *ParamError: %s", err, tt.want)
			}
			if n := f.prov.Calls(); n != 0 {
				t.Errorf("the model was called %d times", n)
			}
		})
	}
}
