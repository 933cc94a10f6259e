package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestRun_PromptDirs runs a turn whose agent prompt uses a template of a
// prompt folder, which uses a shared partial: the model receives the
// rendered prompt. A template the folder lacks is a configuration error
// naming it.
func TestRun_PromptDirs(t *testing.T) {
	w := startWire(t, streamScript)
	files := map[string]string{
		"_partials.tmpl": `{{define "hdr"}}You work for {{.Company}}.{{end}}`,
		"coder.tmpl":     `{{template "hdr" .}} You write {{.Language}}.`,
	}
	cfg := writeConfig(t, fmt.Sprintf("data_dir: data\nworkspace: .\ndefault_model: wire/m\nprompt_dirs: [.]\n"+
		"providers:\n  - {name: wire, type: openai, base_url: %q, default_model: m}\n"+
		"agents:\n  - name: coder\n    prompt: '{{template \"coder\" .}}'\n    vars: {Company: Acme, Language: Go}\n", w.URL), files)
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "run", "look around")
	if code != exitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	reqs := w.requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the model")
	}
	first := reqs[0]["messages"].([]any)[0].(map[string]any)
	if first["role"] != "system" || first["content"] != "You work for Acme. You write Go." {
		t.Errorf("system message = %v", first)
	}

	bad := writeConfig(t, "prompt_dirs: [.]\nagents:\n  - name: coder\n    prompt: '{{template \"reviewer\" .}}'\n", files)
	code, _, stderr = runCLI(t.Context(), t, nil, "--config", bad, "run", "hi")
	if code != exitUsage || !strings.Contains(stderr, `agents[0].prompt: unknown prompt template "reviewer"`) {
		t.Errorf("exit code %d, want %d naming the template\nstderr:\n%s", code, exitUsage, stderr)
	}
}
