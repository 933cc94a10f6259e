package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// defaultListEntries is list_dir's entry cap when the call names none.
const defaultListEntries = 500

// ListDirParams are list_dir's arguments.
type ListDirParams struct {
	Path       string `json:"path,omitempty" jsonschema:"description=Directory to list (relative to the workspace root). Default: the workspace root.,default=."`
	Recursive  bool   `json:"recursive,omitempty" jsonschema:"description=List the whole tree below path (.git is not entered)"`
	MaxEntries int    `json:"max_entries,omitempty" jsonschema:"description=Maximum number of entries to return. Default 500.,minimum=1"`
}

// ListDir is the list_dir tool: it lists a directory, or the tree below it,
// sorted, directories with a trailing "/" and symlinks marked with "@" and
// their target. It walks through the workspace root and never follows a
// symlink.
type ListDir struct{}

// NewListDir returns list_dir.
func NewListDir(Options) *ListDir { return &ListDir{} }

// Name returns "list_dir".
func (*ListDir) Name() string { return "list_dir" }

// Description tells the model how to use list_dir.
func (*ListDir) Description() string {
	return "List a directory of the workspace (or its whole tree with recursive). Paths are relative to " +
		"the workspace root; directories end with /, symlinks with @ followed by their target."
}

// Permission is PermReadOnly.
func (*ListDir) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams is nil.
func (*ListDir) SecretParams() []string { return nil }

// Idempotent is true.
func (*ListDir) Idempotent() bool { return true }

// Execute lists the directory.
func (*ListDir) Execute(ctx context.Context, p ListDirParams, tc *toolsys.Context) (toolsys.Result, error) {
	ws, base, res, ok := resolveDir(tc, p.Path)
	if !ok {
		return res, nil
	}
	limit := p.MaxEntries
	if limit <= 0 {
		limit = defaultListEntries
	}
	var entries []string
	truncated := false
	err := ws.WalkDir(base, func(name string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if name == display(base) {
			return err
		}
		if err != nil {
			return skipEntry(d)
		}
		if len(entries) == limit {
			truncated = true
			return fs.SkipAll
		}
		entries = append(entries, describeEntry(ws, name, d))
		if d.IsDir() && (!p.Recursive || d.Name() == ".git") {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return toolsys.Result{}, fmt.Errorf("list_dir: %w", err)
		}
		return fileError(display(base), err), nil
	}
	meta := map[string]any{"path": display(base), "entries": len(entries), "truncated": truncated}
	if len(entries) == 0 {
		return toolsys.Result{Content: fmt.Sprintf("%s is empty", dirLabel(display(base))), Metadata: meta}, nil
	}
	out := strings.Join(entries, "\n") + "\n"
	if truncated {
		out += fmt.Sprintf("[listing stopped at %d entries; list a subdirectory or raise max_entries]\n", limit)
	}
	return toolsys.Result{Content: out, Metadata: meta}, nil
}

// describeEntry renders one entry, by its slash-separated workspace name:
// "/" after a directory, and "@ -> target" after a symlink, whose target is
// shown only when it stays inside the workspace.
func describeEntry(ws *toolsys.Workspace, name string, d fs.DirEntry) string {
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		target, err := ws.Name(name)
		switch {
		case errors.Is(err, toolsys.ErrOutsideWorkspace):
			return name + "@ -> (outside the workspace)"
		case err != nil:
			return name + "@ -> (broken link)"
		}
		if st, err := ws.FS().Stat(target); err == nil && st.IsDir() {
			return name + "@ -> " + dirLabel(display(target))
		}
		return name + "@ -> " + display(target)
	case d.IsDir():
		return name + "/"
	}
	return name
}

// dirLabel writes a directory's relative path with a trailing "/" ("./" for
// the root).
func dirLabel(rel string) string {
	return strings.TrimSuffix(rel, "/") + "/"
}
