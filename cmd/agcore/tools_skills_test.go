package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolsList_MemorySearchSkills: with memory_tools, web_search and
// skills configured, tools list shows the memory tools, web_search and
// load_skill with their source and category, and names a SKILL.md that
// did not load, with its line, below the table.
func TestToolsList_MemorySearchSkills(t *testing.T) {
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	for rel, content := range map[string]string{
		"pdf/SKILL.md":    "---\nname: pdf\ndescription: Work with PDF files.\n---\nbody\n",
		"broken/SKILL.md": "---\nname: broken\n---\n",
	} {
		p := filepath.Join(skills, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "agcore.yaml")
	if err := os.WriteFile(cfg, []byte(`data_dir: data
memory_tools:
  enabled: true
web_search:
  backend: searxng
  url: http://127.0.0.1:1
skills:
  dir: skills
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", cfg, "tools", "list")
	if code != exitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	for name, want := range map[string][]string{
		"memory_write":  {"builtin", "write", "memory"},
		"memory_read":   {"builtin", "read-only", "memory"},
		"memory_search": {"builtin", "read-only", "memory"},
		"memory_delete": {"builtin", "write", "memory"},
		"web_search":    {"builtin", "read-only", "web"},
		"load_skill":    {"builtin", "read-only", "skills"},
		"read_file":     {"builtin", "read-only", "files"},
	} {
		fields := strings.Fields(lineOf(stdout, name+" "))
		if len(fields) < 4 || fields[1] != want[0] || fields[2] != want[1] || fields[3] != want[2] {
			t.Errorf("%s: %v, want source, permission and category %v", name, fields, want)
		}
	}
	if want := filepath.Join(skills, "broken", "SKILL.md") + ":2: description: required"; !strings.Contains(stderr, "left out: "+want) {
		t.Errorf("stderr does not name the skill left out (%s):\n%s", want, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("tools list created the data directory: %v", err)
	}
}
