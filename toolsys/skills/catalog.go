package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
)

// SkillFile is the name of a skill's instructions file in its folder.
const SkillFile = "SKILL.md"

// MaxResources is the most resource files of one skill that load_skill
// lists.
const MaxResources = 200

// Config configures Load. Only Dir is required.
type Config struct {
	// Dir is the folder of skills: each of its sub-folders that holds a
	// SKILL.md is a skill, and the other files of that sub-folder are its
	// resources. Required; it must exist.
	Dir string
	// Logger receives the skills that did not load. The zero Logger
	// discards.
	Logger zerolog.Logger
}

// Catalog is the skills of a folder, loaded once. It holds one read-only
// root per skill folder, through which read_file reads the skill's
// resources (see ReadFile); Close releases them. A Catalog is safe for
// concurrent use.
type Catalog struct {
	dir    string
	skills map[string]*entry
	order  []string
	// Refused are the skills that did not load, with the reason: a
	// *ParseError naming the file and the line for a malformed SKILL.md.
	Refused []error
}

// entry is a loaded skill with the root of its folder.
type entry struct {
	Skill
	given string             // the folder as the catalog's Dir names it, made absolute
	ws    *toolsys.Workspace // opened on the folder
}

// Load reads every skill of cfg.Dir. A SKILL.md that does not parse, names
// a skill already loaded, or lies in cfg.Dir itself rather than in a
// sub-folder, is left out and listed in Catalog.Refused (and logged); the
// other skills load. Load fails only when Dir cannot be
// read.
func Load(cfg Config) (*Catalog, error) {
	if cfg.Dir == "" {
		return nil, errors.New("skills: Dir is empty: name the folder of skills")
	}
	abs, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("skills: folder %s: %w", cfg.Dir, err)
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("skills: folder %s: %w", cfg.Dir, err)
	}
	c := &Catalog{dir: abs, skills: map[string]*entry{}}
	if st, err := os.Stat(filepath.Join(abs, SkillFile)); err == nil && st.Mode().IsRegular() {
		err := &ParseError{File: filepath.Join(abs, SkillFile), Msg: "a SKILL.md directly in the skills folder is not loaded: " +
			"put each skill in a sub-folder of its own (" + filepath.Join(cfg.Dir, "<name>", SkillFile) + ")"}
		cfg.Logger.Warn().Err(err).Msg("skills: a skill was left out")
		c.Refused = append(c.Refused, err)
	}
	for _, de := range ents {
		folder := filepath.Join(abs, de.Name())
		if st, err := os.Stat(folder); err != nil || !st.IsDir() {
			continue
		}
		e, err := loadSkill(folder)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a folder without SKILL.md is not a skill
		}
		if err == nil {
			if prev, dup := c.skills[e.Name]; dup {
				_ = e.ws.Close()
				err = &ParseError{File: e.File, Line: 0, Msg: fmt.Sprintf("skill %q is already defined by %s", e.Name, prev.File)}
			}
		}
		if err != nil {
			cfg.Logger.Warn().Err(err).Str("folder", folder).Msg("skills: a skill was left out")
			c.Refused = append(c.Refused, err)
			continue
		}
		c.skills[e.Name] = e
		c.order = append(c.order, e.Name)
	}
	slices.Sort(c.order)
	return c, nil
}

// loadSkill opens a skill folder and parses its SKILL.md. An error
// wrapping fs.ErrNotExist means the folder holds no SKILL.md.
func loadSkill(folder string) (*entry, error) {
	ws, err := toolsys.NewWorkspace(folder)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	file := filepath.Join(folder, SkillFile)
	data, err := readSkillFile(ws)
	if err == nil {
		var s Skill
		if s, err = Parse(file, data); err == nil {
			s.Dir = ws.Root()
			s.Resources = resources(ws)
			return &entry{Skill: s, given: folder, ws: ws}, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		err = &ParseError{File: file, Msg: err.Error()}
	}
	_ = ws.Close()
	return nil, err
}

// readSkillFile reads the folder's SKILL.md, a regular file of at most
// MaxFileBytes, through its root.
func readSkillFile(ws *toolsys.Workspace) ([]byte, error) {
	f, st, err := ws.OpenRegular(SkillFile, toolsys.FilePolicy{AllowHardlinks: true})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d a SKILL.md may have", st.Size(), MaxFileBytes)
	}
	return io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
}

// resources lists the regular files of a skill folder other than its
// SKILL.md, at most MaxResources, skipping hidden files and folders.
func resources(ws *toolsys.Workspace) []string {
	var out []string
	_ = ws.WalkDir(".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if name != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || name == SkillFile {
			return nil
		}
		if len(out) == MaxResources {
			return fs.SkipAll
		}
		out = append(out, filepath.ToSlash(name))
		return nil
	})
	slices.Sort(out)
	return out
}

// Dir returns the catalog's folder, absolute.
func (c *Catalog) Dir() string { return c.dir }

// Names returns the names of the skills, sorted.
func (c *Catalog) Names() []string { return slices.Clone(c.order) }

// Get returns the named skill.
func (c *Catalog) Get(name string) (Skill, bool) {
	e, ok := c.skills[name]
	if !ok {
		return Skill{}, false
	}
	s := e.Skill
	s.Resources = slices.Clone(s.Resources)
	return s, true
}

// Len returns the number of skills.
func (c *Catalog) Len() int { return len(c.order) }

// Prompt returns the skills layer of a system prompt: what skills are, the
// instruction to load one with load_skill, and one line per skill with its
// name and description. It returns "" for a catalog without skills.
func (c *Catalog) Prompt() string {
	if len(c.order) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<skills>\nSkills are instructions for particular tasks. When a task matches a skill's description, " +
		"call " + LoadSkillName + " with the skill's name before you start, and follow what it says.\n")
	for _, name := range c.order {
		fmt.Fprintf(&b, "- %s: %s\n", name, c.skills[name].Description)
	}
	b.WriteString("</skills>")
	return b.String()
}

// Close releases the roots of the skill folders. Close is idempotent.
func (c *Catalog) Close() error {
	var errs []error
	for _, e := range c.skills {
		if err := e.ws.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// folderOf returns the skill whose folder holds the absolute path p
// (lexically: p is the folder as the catalog names it or as its symlinks
// resolve, or below one of them).
func (c *Catalog) folderOf(p string) (*entry, bool) {
	if !filepath.IsAbs(p) {
		return nil, false
	}
	p = filepath.Clean(p)
	for _, name := range c.order {
		e := c.skills[name]
		for _, base := range []string{e.given, e.Dir} {
			if rel, err := filepath.Rel(base, p); err == nil && filepath.IsLocal(rel) {
				return e, true
			}
		}
	}
	return nil, false
}
