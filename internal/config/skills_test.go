package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/skills"
)

func TestBuild_Skills(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "skills")
	for rel, content := range map[string]string{
		"pdf/SKILL.md":     "---\nname: pdf\ndescription: Work with PDF files.\n---\nRead reference.md first.\n",
		"pdf/reference.md": "the reference\n",
		"broken/SKILL.md":  "---\nname: Broken Skill\ndescription: x\n---\n",
		"../ws/notes.txt":  "workspace\n",
		"../outside/x.txt": "outside\n",
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := Parse(filepath.Join(base, "agcore.yaml"), []byte("skills:\n  dir: skills\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Skills.Dir != dir {
		t.Fatalf("skills.dir = %s, want it relative to the file: %s", cfg.Skills.Dir, dir)
	}
	cfg.DataDir, cfg.Workspace = "", filepath.Join(base, "ws")
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	if info, ok := built.Tools.Info("load_skill"); !ok || info.Source != toolsys.SourceBuiltin || info.Category != "skills" {
		t.Errorf("load_skill = %+v (registered %v)", info, ok)
	}
	if info, _ := built.Tools.Info("read_file"); info.Source != toolsys.SourceBuiltin || info.Category != "files" {
		t.Errorf("read_file = %+v", info)
	}
	if l := built.Runtime.Skills; l.Tool != "load_skill" || !strings.Contains(l.Prompt, "- pdf: Work with PDF files.") {
		t.Errorf("skills layer = %+v", l)
	}
	var pe *skills.ParseError
	if len(built.Skills.Refused) != 1 || !errors.As(built.Skills.Refused[0], &pe) || pe.File != filepath.Join(dir, "broken", "SKILL.md") || pe.Line != 2 {
		t.Errorf("refused = %v, want broken/SKILL.md:2", built.Skills.Refused)
	}
	tc := &toolsys.Context{Workspace: built.Runtime.Workspace}
	read := func(path string) toolsys.Result {
		args, _ := json.Marshal(map[string]string{"path": path})
		res, err := built.Tools.Call(t.Context(), "read_file", args, tc)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	real, _ := filepath.EvalSymlinks(dir)
	if res := read(filepath.Join(real, "pdf", "reference.md")); res.IsError || !strings.Contains(res.Content, "the reference") {
		t.Errorf("read_file of a skill file = %+v", res)
	}
	if res := read("notes.txt"); res.IsError || !strings.Contains(res.Content, "workspace") {
		t.Errorf("read_file in the workspace = %+v", res)
	}
	if res := read(filepath.Join(base, "outside", "x.txt")); !res.IsError || strings.Contains(res.Content, "outside\n") {
		t.Errorf("read_file outside both = %+v", res)
	}
}

func TestBuild_SkillsDirMissing(t *testing.T) {
	cfg := Default()
	cfg.DataDir, cfg.Workspace = "", t.TempDir()
	cfg.Skills.Dir = filepath.Join(t.TempDir(), "nope")
	if _, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true}); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "skills.dir") {
		t.Errorf("Build = %v, want skills.dir named", err)
	}
}

// TestLoad_ExampleMemorySearchSkills: the example file shows the defaults
// of the memory_tools, web_search and skills sections, and with them no
// memory tool, no web_search and no load_skill is registered.
func TestLoad_ExampleMemorySearchSkills(t *testing.T) {
	cfg, err := Load(filepath.Join("..", "..", "docs", "agcore.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.MemoryTools; m.Enabled || m.Scope != "agent" || m.MaxValueBytes != 64<<10 || m.MaxResults != 10 {
		t.Errorf("memory_tools = %+v", m)
	}
	if w := cfg.WebSearch; w.Backend != "" || w.MaxResults != 5 || w.Timeout != 15*time.Second {
		t.Errorf("web_search = %+v", w)
	}
	if cfg.Skills.Dir != "" {
		t.Errorf("skills.dir = %q", cfg.Skills.Dir)
	}
	built, err := Build(t.Context(), cfg, BuildOptions{Getenv: func(string) string { return "" }, ToolsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	for _, name := range []string{"memory_write", "web_search", "load_skill"} {
		if _, ok := built.Tools.Get(name); ok {
			t.Errorf("%s is registered by the example's defaults", name)
		}
	}
}
