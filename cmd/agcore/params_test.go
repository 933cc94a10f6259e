package main

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRun_ParamsReachTheWire sets every request parameter in an agent
// profile and checks the chat completion requests the endpoint receives.
func TestRun_ParamsReachTheWire(t *testing.T) {
	w := startWire(t, streamScript)
	cfg := writeConfig(t, fmt.Sprintf(`data_dir: data
workspace: .
default_model: wire/m
providers:
  - {name: wire, type: openai, base_url: %q, default_model: m}
agents:
  - name: a
    params:
      temperature: 0.2
      top_p: 0.9
      max_tokens: 300
      tool_choice: required
      parallel_tool_calls: false
      response_format:
        type: json_schema
        name: answer
        strict: true
        schema:
          type: object
          properties: {summary: {type: string}}
          required: [summary]
      seed: 7
      stop: ["</done>"]
      reasoning_effort: low
      user: ops
      metadata: {team: agents}
`, w.URL), nil)
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "run", "look around")
	if code != exitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	reqs := w.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	want := map[string]any{
		"temperature": 0.2, "top_p": 0.9, "max_tokens": 300.0, "tool_choice": "required", "parallel_tool_calls": false,
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "answer", "strict": true,
			"schema": map[string]any{"type": "object", "properties": map[string]any{"summary": map[string]any{"type": "string"}}, "required": []any{"summary"}}}},
		"seed": 7.0, "stop": []any{"</done>"}, "reasoning_effort": "low", "user": "ops", "metadata": map[string]any{"team": "agents"},
	}
	for i, r := range reqs {
		got := map[string]any{}
		for k := range want {
			if v, ok := r[k]; ok {
				got[k] = v
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("request %d parameters (-want +got):\n%s", i+1, diff)
		}
	}
}
