package skills

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/builtin"
)

// writeTree creates the files (path relative to root → content).
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// testCatalog loads a skills folder with two good skills (pdf, with
// resources, and git-log), a malformed one and a folder that is no skill.
func testCatalog(t *testing.T) (*Catalog, string) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"pdf/SKILL.md":               "---\nname: pdf\ndescription: Work with PDF files.\n---\n# PDF\nRun scripts/fill.py.\n",
		"pdf/reference.md":           "field names\n",
		"pdf/scripts/fill.py":        "print('fill')\n",
		"pdf/.hidden":                "not listed\n",
		"git/SKILL.md":               "---\nname: git-log\ndescription: Read history.\n---\nUse git log.",
		"broken/SKILL.md":            "---\nname: broken\n---\nno description\n",
		"notes/README.md":            "not a skill\n",
		"loose-file.md":              "ignored\n",
		"pdf-copy/SKILL.md":          "---\nname: pdf\ndescription: Another PDF skill.\n---\n",
		"pdf-copy/unrelated/data.md": "x",
	})
	c, err := Load(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, dir
}

func TestLoad(t *testing.T) {
	c, dir := testCatalog(t)
	if got := strings.Join(c.Names(), ","); got != "git-log,pdf" {
		t.Fatalf("names = %s, want git-log,pdf", got)
	}
	s, _ := c.Get("pdf")
	if got := strings.Join(s.Resources, ","); got != "reference.md,scripts/fill.py" {
		t.Errorf("resources = %s", got)
	}
	if len(c.Refused) != 2 {
		t.Fatalf("refused = %v, want the malformed and the duplicate skill", c.Refused)
	}
	var pe *ParseError
	if !errors.As(c.Refused[0], &pe) || pe.File != filepath.Join(dir, "broken", "SKILL.md") || pe.Line != 2 ||
		!strings.Contains(pe.Msg, "description: required") {
		t.Errorf("refused[0] = %v, want broken/SKILL.md:2: description: required", c.Refused[0])
	}
	if err := c.Refused[1]; !strings.Contains(err.Error(), filepath.Join("pdf-copy", "SKILL.md")) ||
		!strings.Contains(err.Error(), "already defined by "+filepath.Join(dir, "pdf", "SKILL.md")) {
		t.Errorf("refused[1] = %v, want the duplicate named with both files", err)
	}
}

func TestLoad_SkillFileAtTheTop(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"SKILL.md":    "---\nname: top\ndescription: Misplaced.\n---\n",
		"ok/SKILL.md": "---\nname: ok\ndescription: Fine.\n---\n",
	})
	c, err := Load(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.Names(); len(got) != 1 || got[0] != "ok" {
		t.Errorf("names = %v, want [ok]", got)
	}
	if len(c.Refused) != 1 || !strings.Contains(c.Refused[0].Error(), "put each skill in a sub-folder") {
		t.Errorf("refused = %v, want the top-level SKILL.md named", c.Refused)
	}
}

func TestLoad_Errors(t *testing.T) {
	if _, err := Load(Config{}); err == nil || !strings.Contains(err.Error(), "Dir is empty") {
		t.Errorf("empty Dir: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := Load(Config{Dir: missing}); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing Dir: %v", err)
	}
}

func TestCatalog_Prompt(t *testing.T) {
	c, _ := testCatalog(t)
	want := "<skills>\nSkills are instructions for particular tasks. When a task matches a skill's description, " +
		"call load_skill with the skill's name before you start, and follow what it says.\n" +
		"- git-log: Read history.\n- pdf: Work with PDF files.\n</skills>"
	if got := c.Prompt(); got != want {
		t.Errorf("Prompt() =\n%s\nwant\n%s", got, want)
	}
	empty, err := Load(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := empty.Prompt(); got != "" {
		t.Errorf("empty catalog prompt = %q", got)
	}
}

func call(t *testing.T, tool toolsys.Tool, args string, tc *toolsys.Context) toolsys.Result {
	t.Helper()
	res, err := tool.Execute(context.Background(), json.RawMessage(args), tc)
	if err != nil {
		t.Fatalf("%s(%s): %v", tool.Name(), args, err)
	}
	return res
}

func TestLoadSkill(t *testing.T) {
	c, dir := testCatalog(t)
	tool := c.Tool()
	res := call(t, tool, `{"name":"pdf"}`, nil)
	real, _ := filepath.EvalSymlinks(dir)
	want := "<skill name=\"pdf\">\n# PDF\nRun scripts/fill.py.\n</skill>\n\nFiles of this skill (read them with read_file, by these paths, when its instructions need them):\n" +
		"- " + filepath.Join(real, "pdf", "reference.md") + "\n- " + filepath.Join(real, "pdf", "scripts", "fill.py") + "\n"
	if res.IsError || res.Content != want {
		t.Errorf("load_skill pdf =\n%s\nwant\n%s", res.Content, want)
	}
	res = call(t, tool, `{"name":"git-log"}`, nil)
	if res.IsError || res.Content != "<skill name=\"git-log\">\nUse git log.\n</skill>\n" {
		t.Errorf("load_skill git-log = %q", res.Content)
	}
	for _, name := range []string{"broken", "nope", "../pdf"} {
		res = call(t, tool, `{"name":"`+name+`"}`, nil)
		if !res.IsError || !strings.Contains(res.Content, "unknown skill") || !strings.Contains(res.Content, "git-log, pdf") {
			t.Errorf("load_skill %s = %+v, want an error listing the skills", name, res)
		}
	}
	if res = call(t, tool, `{}`, nil); !res.IsError || !strings.Contains(res.Content, "name") {
		t.Errorf("load_skill without a name = %+v", res)
	}
}

// skillFixture is a workspace and a skills folder beside it, with read_file
// wrapped by the catalog.
type skillFixture struct {
	read, write toolsys.Tool
	tc          *toolsys.Context
	ws, skills  string
}

func newSkillFixture(t testing.TB) skillFixture {
	t.Helper()
	base := t.TempDir()
	ws, skills := filepath.Join(base, "ws"), filepath.Join(base, "skills")
	writeTree(t, ws, map[string]string{"notes.txt": "workspace file\n"})
	writeTree(t, skills, map[string]string{
		"pdf/SKILL.md":     "---\nname: pdf\ndescription: PDF.\n---\nbody\n",
		"pdf/reference.md": "skill reference\n",
		"other/SKILL.md":   "---\nname: other\ndescription: Other.\n---\n",
		"other/data.txt":   "other data\n",
		"secret.txt":       "outside every skill folder\n",
	})
	if err := os.WriteFile(filepath.Join(base, "outside.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "outside.txt"), filepath.Join(skills, "pdf", "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(skills, "other"), filepath.Join(skills, "pdf", "sibling")); err != nil {
		t.Fatal(err)
	}
	c, err := Load(Config{Dir: skills})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	w, err := toolsys.NewWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	opts := builtin.Options{}
	return skillFixture{
		read:  c.ReadFile(toolsys.Bridge[builtin.ReadFileParams](builtin.NewReadFile(opts))),
		write: toolsys.Bridge[builtin.WriteFileParams](builtin.NewWriteFile(opts)),
		tc:    &toolsys.Context{Workspace: w}, ws: ws, skills: skills,
	}
}

func TestReadFile_SkillResources(t *testing.T) {
	f := newSkillFixture(t)
	for _, tc := range []struct {
		name, path string
		want       string // in the content
		isError    bool
	}{
		{"skill resource", filepath.Join(f.skills, "pdf", "reference.md"), "skill reference", false},
		{"skill body file", filepath.Join(f.skills, "pdf", "SKILL.md"), "name: pdf", false},
		{"another skill", filepath.Join(f.skills, "other", "data.txt"), "other data", false},
		{"workspace file, relative", "notes.txt", "workspace file", false},
		{"workspace file, absolute", filepath.Join(f.ws, "notes.txt"), "workspace file", false},
		{"symlink out of the skill", filepath.Join(f.skills, "pdf", "escape.txt"), "outside the workspace", true},
		{"symlink to another skill", filepath.Join(f.skills, "pdf", "sibling", "data.txt"), "outside the workspace", true},
		{"dot-dot out of the skills", filepath.Join(f.skills, "pdf") + "/../../outside.txt", "outside the workspace", true},
		{"file of the skills folder itself", filepath.Join(f.skills, "secret.txt"), "outside the workspace", true},
		{"missing resource", filepath.Join(f.skills, "pdf", "nope.md"), "file not found", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"path": tc.path})
			res := call(t, f.read, string(args), f.tc)
			if res.IsError != tc.isError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("read_file %s = %+v, want IsError %v and %q", tc.path, res, tc.isError, tc.want)
			}
			if strings.Contains(res.Content, "outside\n") || strings.Contains(res.Content, "outside every skill") {
				t.Errorf("read_file %s leaked a file outside the skill: %q", tc.path, res.Content)
			}
		})
	}
}

func TestReadFile_SkillFolderIsReadOnly(t *testing.T) {
	f := newSkillFixture(t)
	target := filepath.Join(f.skills, "pdf", "reference.md")
	args, _ := json.Marshal(map[string]string{"path": target, "content": "overwritten"})
	res := call(t, f.write, string(args), f.tc)
	if !res.IsError || !strings.Contains(res.Content, "outside the workspace") {
		t.Errorf("write_file into a skill = %+v, want refused", res)
	}
	if b, _ := os.ReadFile(target); string(b) != "skill reference\n" {
		t.Errorf("the skill file changed: %q", b)
	}
	if got := f.read.(toolsys.RuleSubjecter).RuleSubject(json.RawMessage(`{"path":"`+target+`"}`), f.tc); got != target {
		t.Errorf("rule subject = %q, want the absolute path %q", got, target)
	}
	if got := f.read.(toolsys.RuleSubjecter).RuleSubject(json.RawMessage(`{"path":"./notes.txt"}`), f.tc); got != "notes.txt" {
		t.Errorf("rule subject = %q, want notes.txt", got)
	}
}

func TestReadFile_SkillHardlinkRefused(t *testing.T) {
	f := newSkillFixture(t)
	outside := filepath.Join(filepath.Dir(f.skills), "outside.txt")
	link := filepath.Join(f.skills, "pdf", "linked.txt")
	if err := os.Link(outside, link); err != nil {
		t.Skipf("cannot make a hard link here: %v", err)
	}
	args, _ := json.Marshal(map[string]string{"path": link})
	res := call(t, f.read, string(args), f.tc)
	if !res.IsError || !strings.Contains(res.Content, "hard links") || strings.Contains(res.Content, "outside\n") {
		t.Errorf("read_file of a hard link = %+v, want refused", res)
	}
}

// FuzzReadFileSkillPath: whatever path read_file is given, it never
// returns the file beside the skills folder nor the file of the skills
// folder itself, and a skill file it returns is one of the skills'.
func FuzzReadFileSkillPath(f *testing.F) {
	f.Add("/pdf/reference.md")
	f.Add("/pdf/../secret.txt")
	f.Add("/pdf/escape.txt")
	f.Add("/pdf/sibling/data.txt")
	f.Add("/../outside.txt")
	f.Add("notes.txt")
	f.Add("../outside.txt")
	f.Add("/pdf/./reference.md")
	fx := newSkillFixture(f)
	ok, err := fx.read.Execute(context.Background(), json.RawMessage(`{"path":"`+fx.skills+`/pdf/reference.md"}`), fx.tc)
	if err != nil || ok.IsError {
		f.Fatalf("the fixture does not read a skill file: %+v, %v", ok, err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.HasPrefix(p, "/") {
			p = fx.skills + p
		}
		args, err := json.Marshal(map[string]string{"path": p})
		if err != nil {
			return
		}
		res, err := fx.read.Execute(context.Background(), args, fx.tc)
		if err != nil {
			t.Fatalf("read_file %q: %v", p, err)
		}
		if !res.IsError && (strings.Contains(res.Content, "outside\n") || strings.Contains(res.Content, "outside every skill")) {
			t.Fatalf("read_file %q leaked %q", p, res.Content)
		}
	})
}
