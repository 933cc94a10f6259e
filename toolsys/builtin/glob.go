package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// GlobParams are glob's arguments.
type GlobParams struct {
	Pattern string `json:"pattern" jsonschema:"description=Glob pattern relative to path. * ? and [a-z] match within one path segment; ** matches any number of directories. Examples: **/*.go and src/**/test_*.py"`
	Path    string `json:"path,omitempty" jsonschema:"description=Directory to search from (relative to the workspace root). Default: the workspace root."`
}

// Glob is the glob tool: it lists the files and directories under a
// directory whose paths match a pattern with "**" support, sorted and
// capped. It walks through the workspace root, never follows symlinks and
// skips .git directories; it reads names only, never file content.
type Glob struct {
	maxResults int
}

// NewGlob returns glob; it uses opts.GlobMaxResults.
func NewGlob(opts Options) *Glob {
	return &Glob{maxResults: opts.withDefaults().GlobMaxResults}
}

// Name returns "glob".
func (*Glob) Name() string { return "glob" }

// Description tells the model how to use glob.
func (*Glob) Description() string {
	return "Find files by path pattern, e.g. **/*.go or docs/*.md. Returns matching paths relative to the " +
		"workspace root, sorted; directories end with /."
}

// Permission is PermReadOnly.
func (*Glob) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams is nil.
func (*Glob) SecretParams() []string { return nil }

// Idempotent is true.
func (*Glob) Idempotent() bool { return true }

// Execute walks the directory and matches the pattern.
func (t *Glob) Execute(ctx context.Context, p GlobParams, tc *toolsys.Context) (toolsys.Result, error) {
	g, err := compileGlob(p.Pattern)
	if err != nil {
		return toolsys.ErrorResult("invalid pattern %q: %v", p.Pattern, err), nil
	}
	ws, base, res, ok := resolveDir(tc, p.Path)
	if !ok {
		return res, nil
	}
	var found []string
	truncated := false
	err = ws.WalkDir(base, func(name string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if name == display(base) {
			return err
		}
		if err != nil {
			return skipEntry(d)
		}
		rel := below(display(base), name)
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if g.match(rel) {
			if len(found) == t.maxResults {
				truncated = true
				return fs.SkipAll
			}
			found = append(found, displayPath(name, d))
		}
		if d.IsDir() && !g.canDescend(rel) {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return toolsys.Result{}, fmt.Errorf("glob: %w", err)
		}
		return fileError(display(base), err), nil
	}
	slices.Sort(found)
	meta := map[string]any{"matches": len(found), "truncated": truncated}
	if len(found) == 0 {
		return toolsys.Result{Content: fmt.Sprintf("No paths match %q under %s", p.Pattern, display(base)), Metadata: meta}, nil
	}
	out := strings.Join(found, "\n") + "\n"
	if truncated {
		out += fmt.Sprintf("[results capped at %d; narrow the pattern or the path]\n", t.maxResults)
	}
	return toolsys.Result{Content: out, Metadata: meta}, nil
}

// resolveDir resolves dir (default ".") to the workspace name of an existing
// directory of the call's workspace. When ok is false, res is the refusal
// for the model.
func resolveDir(tc *toolsys.Context, dir string) (ws *toolsys.Workspace, name string, res toolsys.Result, ok bool) {
	if dir == "" {
		dir = "."
	}
	ws, name, err := resolve(tc, dir)
	if err != nil {
		return nil, "", toolsys.ErrorResult("%v", err), false
	}
	st, err := ws.FS().Stat(name)
	if err != nil {
		return nil, "", fileError(display(name), err), false
	}
	if !st.IsDir() {
		return nil, "", toolsys.ErrorResult("%s is not a directory", display(name)), false
	}
	return ws, name, toolsys.Result{}, true
}

// skipEntry is what a walk does with an entry it cannot read: skip it (and
// everything below it).
func skipEntry(d fs.DirEntry) error {
	if d != nil && d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// displayPath is how a walked entry, by its slash-separated workspace name,
// appears in output: directories with a trailing "/".
func displayPath(name string, d fs.DirEntry) string {
	if d.IsDir() {
		return name + "/"
	}
	return name
}
