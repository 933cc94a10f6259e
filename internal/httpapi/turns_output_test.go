package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

const cityOutput = `"output":{"name":"place","schema":{"type":"object","properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"]}}`

// outputScript answers with a city missing its country, then, once told
// the problem, with the whole answer.
func outputScript() scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Contains: "does not match the required JSON schema"}, Reply: scripted.Reply{Text: `{"city":"Paris","country":"France"}`}},
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{Text: `{"city":"Paris"}`}},
	}}
}

// TestTurn_Output: a turn with an output schema answers with the checked
// object, awaited or streamed, and a resubmission of its turn id returns
// the same object.
func TestTurn_Output(t *testing.T) {
	e := newEnv(t, envOptions{script: outputScript()})
	e.createSession("s1")
	resp, body := e.do("POST", "/v1/sessions/s1/turns", `{"input":"where is the Louvre?","turn_id":"t-1",`+cityOutput+`}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	res := decode[actors.TurnResult](t, body)
	if res.Outcome != messages.OutcomeCompleted || string(res.Output) != `{"city":"Paris","country":"France"}` {
		t.Errorf("result %s", body)
	}
	if res.RoundTrips != 2 {
		t.Errorf("%d round trips, want 2 (the answer, its correction)", res.RoundTrips)
	}
	// The same turn id, streamed: turn_ended carries the journaled object.
	stream := e.send("POST", "/v1/sessions/s1/turns", `{"input":"where is the Louvre?","turn_id":"t-1",`+cityOutput+`}`, "Accept", "text/event-stream")
	defer stream.Body.Close()
	frames := newSSEReader(stream.Body).rest(t)
	end, ok := frames[len(frames)-1].event(t).(messages.TurnEnded)
	if !ok || string(end.Output) != string(res.Output) {
		t.Errorf("streamed resubmission ended with %+v, want the same output", frames[len(frames)-1])
	}
}

// TestTurn_OutputFailure: an answer that stays malformed is a 200 whose
// outcome is failed and whose output_failure holds the raw answer.
func TestTurn_OutputFailure(t *testing.T) {
	e := newEnv(t, envOptions{script: scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "Paris, I think"}}}}})
	e.createSession("s1")
	resp, body := e.do("POST", "/v1/sessions/s1/turns", `{"input":"where?",`+strings.Replace(cityOutput, `"name"`, `"retries":0,"name"`, 1)+`}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	res := decode[actors.TurnResult](t, body)
	if res.Outcome != messages.OutcomeFailed || res.Output != nil || res.OutputFailure == nil || res.OutputFailure.Raw != "Paris, I think" ||
		!strings.Contains(res.OutputFailure.Problem, "not valid JSON") || res.RoundTrips != 1 {
		t.Errorf("result %s", body)
	}
}

// TestTurn_OutputRefused: a turn whose output cannot be asked for is a 400
// naming the problem, and nothing is journaled.
func TestTurn_OutputRefused(t *testing.T) {
	e := newEnv(t, envOptions{script: outputScript()})
	e.createSession("s1")
	tests := []struct{ body, code, want string }{
		{`{"input":"x","output":{"schema":{"type":"array"}}}`, httpapi.CodeBadRequest, `"type": "object"`},
		{`{"input":"x","output":{"name":"p"}}`, httpapi.CodeBadRequest, `field "output.schema" is required`},
		{`{"input":"x","output":{"schema":{"type":"object"},"retries":9}}`, httpapi.CodeBadRequest, `"output.retries" must be between 0 and 5`},
		{`{"input":"x","output":{"schema":{"type":"object"},"mode":"xml"}}`, httpapi.CodeBadRequest, `unknown mode "xml"`},
		{`{"input":"x","output":{"schema":{"type":"object"},"strict":true}}`, httpapi.CodeUnknownField, `unknown field "strict"`},
	}
	for _, tt := range tests {
		for _, accept := range []string{"application/json", "text/event-stream"} {
			resp, body := e.do("POST", "/v1/sessions/s1/turns", tt.body, "Accept", accept)
			var got struct {
				Error struct{ Code, Message string }
			}
			_ = json.Unmarshal(body, &got)
			if resp.StatusCode != http.StatusBadRequest || got.Error.Code != tt.code || !strings.Contains(got.Error.Message, tt.want) {
				t.Errorf("%s (%s): %d %s, want 400 %s saying %q", tt.body, accept, resp.StatusCode, body, tt.code, tt.want)
			}
		}
	}
	_, body := e.do("GET", "/v1/sessions/s1", "")
	if !strings.Contains(string(body), `"messages":0`) {
		t.Errorf("status after refused turns: %s", body)
	}
}
