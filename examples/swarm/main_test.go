package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"spawned   swarm-demo:sub:call_1_1 (agent researcher, depth 1)",
		"spawned   swarm-demo:sub:call_1_3 (agent researcher, depth 1)",
		"spawned   swarm-demo:sub:call_2_1 (agent writer, depth 1)",
		"finished  swarm-demo:sub:call_2_1: completed, 50 tokens",
		"A failing child is restarted",
		"answer    Here is your brief, from three researchers and a writer. (completed)",
		"coordinator's own calls   150",
		"session total             350",
		"status agrees: true; runtime total 350",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q\n%s", want, out.String())
		}
	}
}
