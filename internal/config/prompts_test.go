package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePromptConfig writes prompts/ (two templates sharing a partial) and
// agcore.yaml with body, and returns the path of agcore.yaml.
func writePromptConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"prompts/_partials.tmpl": `{{define "hdr"}}You work for {{.Company}}.{{end}}`,
		"prompts/coder.tmpl":     `{{template "hdr" .}} You write code.`,
		"agcore.yaml":            body,
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "agcore.yaml")
}

// TestLoad_PromptDirs loads template folders and builds a runtime whose
// agents use their templates and partials.
func TestLoad_PromptDirs(t *testing.T) {
	path := writePromptConfig(t, "prompt_dirs: [prompts]\nagents:\n  - name: coder\n    prompt: '{{template \"coder\" .}}'\n    vars: {Company: Acme}\n")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(path), "prompts"); len(cfg.PromptDirs) != 1 || cfg.PromptDirs[0] != want {
		t.Errorf("prompt_dirs = %v, want [%s]", cfg.PromptDirs, want)
	}
	built, err := Build(t.Context(), cfg, BuildOptions{Getenv: func(string) string { return "" }, ToolsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	p := built.Runtime.Prompts
	if p == nil {
		t.Fatal("the runtime has no prompt registry")
	}
	got, err := p.Render("coder", map[string]any{"Company": "Acme"})
	if err != nil || got != "You work for Acme. You write code." {
		t.Errorf("Render(coder) = %q, %v", got, err)
	}
}

// TestLoad_PromptErrors checks that a missing folder, a missing template
// and a broken template are reported at load, naming the key.
func TestLoad_PromptErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"missing folder", "prompt_dirs: [nowhere]\n", `agcore.yaml:1: prompt_dirs[0]: prompts `},
		{"missing template", "prompt_dirs: [prompts]\nagents:\n  - name: a\n    prompt: '{{template \"nosuch\" .}}'\n",
			`agcore.yaml:4: agents[0].prompt: actors: unknown prompt template "nosuch"`},
		{"missing template without folders", "agents:\n  - name: a\n    prompt: '{{template \"hdr\" .}}'\n",
			`agcore.yaml:3: agents[0].prompt: actors: unknown prompt template "hdr"`},
		{"base prompt", "prompt_dirs: [prompts]\nbase_prompt: '{{template \"footer\" .}}'\n",
			`agcore.yaml:2: base_prompt: actors: unknown prompt template "footer"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writePromptConfig(t, tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load = %v, want %q", err, tt.want)
			}
		})
	}
}
