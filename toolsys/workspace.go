package toolsys

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideWorkspace is returned (wrapped in a *PathError) when a path
// resolves outside the workspace root.
var ErrOutsideWorkspace = errors.New("path is outside the workspace")

// PathError says which path was rejected and why.
type PathError struct {
	Path string
	Err  error
}

// Error implements error.
func (e *PathError) Error() string { return fmt.Sprintf("workspace: %q: %v", e.Path, e.Err) }

// Unwrap returns the underlying error.
func (e *PathError) Unwrap() error { return e.Err }

// Workspace confines file access to a root directory. It holds an *os.Root
// opened once on that directory, and every open, stat, create, rename and
// remove a file tool makes goes through it (see FS, Name, OpenRegular and
// WalkDir): the kernel resolves each path relative to the root's descriptor
// and os.Root refuses any step that would leave it, so a directory swapped
// for a symlink between a check and an open cannot lead outside. Paths that
// escape by "..", absolute paths outside the root, symlinks (at any depth)
// that lead outside and siblings that merely share the root's name as a
// prefix (/ws vs /ws2) are refused.
//
// The root is pinned to the directory NewWorkspace opened: if that directory
// is later moved or its path is replaced, the workspace keeps addressing the
// original directory.
//
// A Workspace is safe for concurrent use. Close releases the root; a
// workspace that is not closed keeps one file descriptor open until it is
// garbage collected.
type Workspace struct {
	root  string   // absolute, cleaned, symlinks resolved
	given string   // the root as given, made absolute and cleaned
	fsys  *os.Root // opened on root
}

// NewWorkspace opens a workspace rooted at dir, which must exist and be a
// directory. Call Close when the workspace is no longer used.
func NewWorkspace(dir string) (*Workspace, error) {
	if dir == "" {
		return nil, errors.New("workspace: root is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: root %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: root %q: %w", dir, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace: root %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace: root %q is not a directory", dir)
	}
	fsys, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace: root %q: %w", dir, err)
	}
	return &Workspace{root: real, given: filepath.Clean(abs), fsys: fsys}, nil
}

// Close releases the workspace's root. Calls in flight finish; later file
// operations fail with an error wrapping os.ErrClosed. Close is idempotent.
func (w *Workspace) Close() error { return w.fsys.Close() }

// Root returns the workspace's absolute root, symlinks resolved, as it was
// when the workspace was opened. It is for display and for starting
// processes in the workspace; file access goes through FS.
func (w *Workspace) Root() string { return w.root }

// FS returns the root every file operation of the workspace goes through.
// Its methods never reach outside the workspace. Do not close it: Close
// does.
func (w *Workspace) FS() *os.Root { return w.fsys }

// Resolve returns the absolute path, symlinks resolved, that path names
// inside the workspace: Root joined with Name(path). It is for naming a
// file (display, permission subjects); opening by the returned path would
// reintroduce the window that FS closes, so file access uses Name and FS.
// Errors are as for Name.
func (w *Workspace) Resolve(path string) (string, error) {
	name, err := w.Name(path)
	if err != nil {
		return "", err
	}
	return filepath.Join(w.root, name), nil
}

// Rel returns abs relative to the root, for display; "." for the root itself.
func (w *Workspace) Rel(abs string) string {
	rel, err := filepath.Rel(w.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(rel)
}

// local returns the clean absolute path p relative to the workspace root,
// accepting the root's resolved path and the path it was opened by; ok is
// false when p is neither root nor below one.
func (w *Workspace) local(p string) (rel string, ok bool) {
	for _, base := range []string{w.root, w.given} {
		if rel, err := filepath.Rel(base, p); err == nil && filepath.IsLocal(rel) {
			return rel, true
		}
	}
	return "", false
}

// lexical maps path to a clean path relative to the root without touching
// the file system: it refuses an empty path, a NUL byte, a leading ".." and
// an absolute path outside the root.
func (w *Workspace) lexical(path string) (string, error) {
	if path == "" {
		return "", &PathError{Path: path, Err: errors.New("path is empty")}
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", &PathError{Path: path, Err: errors.New("path contains a NUL byte")}
	}
	p := filepath.Clean(path)
	if filepath.IsAbs(p) {
		rel, ok := w.local(p)
		if !ok {
			return "", &PathError{Path: path, Err: ErrOutsideWorkspace}
		}
		return rel, nil
	}
	if !filepath.IsLocal(p) {
		return "", &PathError{Path: path, Err: ErrOutsideWorkspace}
	}
	return p, nil
}
