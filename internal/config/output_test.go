package config

import (
	"strings"
	"testing"

	"github.com/agcore/agcore/messages"
)

func TestParse_StructuredOutput(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte(`default_model: mock/scripted
providers:
  - {name: local, type: openai, base_url: "http://127.0.0.1:11434/v1", structured_output: answer_tool}
  - {name: mock, type: scripted}
agents:
  - {name: a, structured_output: json_schema}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.structuredOutput()
	if len(got) != 1 || got["local"] != messages.OutputAnswerTool {
		t.Errorf("structured output by provider = %v, want local: answer_tool only", got)
	}
	if m := cfg.Agents[0].outputMode(); m != messages.OutputJSONSchema {
		t.Errorf("agent output mode = %q", m)
	}
	for in, want := range map[string]string{
		"providers:\n  - {name: p, type: scripted, structured_output: xml}\n": `providers[0].structured_output: unknown mode "xml" (want json_schema or answer_tool)`,
		"agents:\n  - {name: a, structured_output: tools}\n":                  `agents[0].structured_output: unknown mode "tools"`,
	} {
		if _, err := Parse("agcore.yaml", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}
