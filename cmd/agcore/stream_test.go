package main

import (
	"fmt"
	"strings"
	"testing"
)

// streamScript answers every user message with one tool call, then text.
const streamScript = `stateless: true
rules:
  - match: {role: user}
    reply:
      tool_calls:
        - name: list_dir
          arguments: {path: "."}
  - match: {tool: list_dir}
    reply: {text: "Listed the workspace."}
`

// TestRun_NoStream checks on the wire that a turn streams or not as the
// provider's and the agent's stream keys and --no-stream say, and that the
// turn plays the same either way.
func TestRun_NoStream(t *testing.T) {
	tests := []struct {
		name       string
		provider   string // extra keys of the provider
		agent      string // extra keys of the agent
		args       []string
		wantStream bool
	}{
		{"default streams", "", "", nil, true},
		{"provider stream false", ", stream: false", "", nil, false},
		{"provider stream true", ", stream: true", "", nil, true},
		{"agent stream false", "", ", stream: false", nil, false},
		{"--no-stream", "", "", []string{"--no-stream"}, false},
		{"--no-stream over an agent's stream true", "", ", stream: true", []string{"--no-stream"}, false},
	}
	for _, tt := range tests {
		for _, command := range []string{"run", "chat"} {
			t.Run(tt.name+"/"+command, func(t *testing.T) {
				w := startWire(t, streamScript)
				cfg := writeConfig(t, fmt.Sprintf("data_dir: data\nworkspace: .\ndefault_model: wire/m\n"+
					"providers:\n  - {name: wire, type: openai, base_url: %q, default_model: m%s}\n"+
					"agents:\n  - {name: a%s}\n", w.URL, tt.provider, tt.agent), nil)
				args := append([]string{"--config", cfg, command}, tt.args...)
				stdin := ""
				if command == "run" {
					args = append(args, "look around")
				} else {
					stdin = "look around\n"
				}
				code, stdout, stderr := runCLIInput(t.Context(), t, nil, stdin, args...)
				if code != exitOK || !strings.Contains(stdout, "✓ list_dir") || !strings.Contains(stdout, "Listed the workspace.") {
					t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
				}
				reqs := w.requests()
				if len(reqs) != 2 {
					t.Fatalf("%d requests reached the endpoint, want 2", len(reqs))
				}
				for i, r := range reqs {
					if got := r["stream"] == true; got != tt.wantStream {
						t.Errorf("request %d: stream = %v, want %v", i+1, r["stream"], tt.wantStream)
					}
				}
			})
		}
	}
}
