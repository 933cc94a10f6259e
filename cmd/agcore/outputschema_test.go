package main

import (
	"fmt"
	"strings"
	"testing"
)

const invoiceSchema = `{"type":"object","properties":{"vendor":{"type":"string"},"total":{"type":"number"}},"required":["vendor","total"],"additionalProperties":false}`

// outputConfig is a configuration whose only provider is the wire at url,
// asked for structured answers in mode ("" for the default).
func outputConfig(t *testing.T, url, mode string) string {
	t.Helper()
	so := ""
	if mode != "" {
		so = ", structured_output: " + mode
	}
	return writeConfig(t, fmt.Sprintf(`data_dir: data
workspace: .
default_model: wire/m
providers:
  - {name: wire, type: openai, base_url: %q, default_model: m%s}
`, url, so), map[string]string{"invoice.schema.json": invoiceSchema, "broken.json": `{"type":`, "list.json": `{"type":"array"}`})
}

// TestRun_OutputSchema: --output-schema asks for the schema on the wire
// (response_format, or the answer tool for a provider set so), sends a
// malformed answer back once, and prints only the checked JSON on
// standard output.
func TestRun_OutputSchema(t *testing.T) {
	tests := []struct {
		mode, script string
		check        func(t *testing.T, req map[string]any)
	}{
		{"", `rules:
  - match: {contains: "does not match the required JSON schema"}
    reply: {text: '{"vendor": "ACME", "total": 42.5}'}
  - match: {role: user}
    reply: {text: '{"vendor": "ACME", "total": "42.5"}'}
`, func(t *testing.T, req map[string]any) {
			rf, _ := req["response_format"].(map[string]any)
			js, _ := rf["json_schema"].(map[string]any)
			if rf["type"] != "json_schema" || js["name"] != "invoice" || js["strict"] != true {
				t.Errorf("response_format = %v, want the strict json_schema named invoice", req["response_format"])
			}
		}},
		{"answer_tool", `rules:
  - match: {role: user}
    reply:
      tool_calls:
        - name: answer
          arguments: {vendor: ACME, total: "42.5"}
  - match: {tool: answer}
    reply:
      tool_calls:
        - name: answer
          arguments: {vendor: ACME, total: 42.5}
`, func(t *testing.T, req map[string]any) {
			if req["response_format"] != nil {
				t.Errorf("response_format %v sent in answer_tool mode", req["response_format"])
			}
			found := false
			tools, _ := req["tools"].([]any)
			for _, tool := range tools {
				fn, _ := tool.(map[string]any)["function"].(map[string]any)
				found = found || fn["name"] == "answer"
			}
			if !found || req["tool_choice"] != "required" {
				t.Errorf("tools %v, tool_choice %v: want the answer tool, required", req["tools"], req["tool_choice"])
			}
		}},
	}
	for _, tt := range tests {
		t.Run("mode "+tt.mode, func(t *testing.T) {
			w := startWire(t, tt.script)
			cfg := outputConfig(t, w.URL, tt.mode)
			schema := strings.TrimSuffix(cfg, "agcore.yaml") + "invoice.schema.json"
			code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "run", "--output-schema", schema, "Extract the invoice")
			if code != exitOK {
				t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if stdout != `{"total":42.5,"vendor":"ACME"}`+"\n" {
				t.Errorf("stdout = %q, want the checked JSON alone", stdout)
			}
			reqs := w.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2 (the answer, its correction)", len(reqs))
			}
			for _, r := range reqs {
				tt.check(t, r)
			}
		})
	}
}

// TestRun_OutputSchemaFailures: an answer that stays malformed fails the
// turn (exit 1) with the raw answer on standard error and nothing on
// standard output; a schema file that is not usable is a usage error.
func TestRun_OutputSchemaFailures(t *testing.T) {
	w := startWire(t, "rules:\n  - match: {any: true}\n    reply: {text: 'total: 42.5'}\n")
	cfg := outputConfig(t, w.URL, "")
	dir := strings.TrimSuffix(cfg, "agcore.yaml")
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "run", "--output-schema", dir+"invoice.schema.json", "Extract")
	if code != exitError || stdout != "" {
		t.Errorf("exit %d, stdout %q; want 1 and nothing", code, stdout)
	}
	for _, want := range []string{"turn 1 failed: the answer does not match the output schema after 1 correction(s)", "total: 42.5", "not valid JSON"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	for _, args := range [][]string{
		{"--output-schema", dir + "missing.json"},
		{"--output-schema", dir + "broken.json"},
		{"--output-schema", dir + "list.json"},
	} {
		n := len(w.requests())
		code, _, stderr := runCLI(t.Context(), t, nil, append(append([]string{"--config", cfg, "run"}, args...), "Extract")...)
		if code != exitUsage || !strings.Contains(stderr, "--output-schema") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming the flag", args, code, stderr)
		}
		if len(w.requests()) != n {
			t.Errorf("%v: the model was asked", args)
		}
	}
}
