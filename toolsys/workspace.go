package toolsys

import (
	"errors"
	"fmt"
	"io/fs"
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

// Workspace confines file access to a root directory. Every path a tool
// touches goes through Resolve, which rejects ".." escapes, absolute paths
// outside the root, symlinks (at any depth, including symlinked parent
// directories) that lead outside, and sibling directories that merely share
// the root's name as a prefix (/ws vs /ws2). It is safe for concurrent use.
type Workspace struct {
	root string // absolute, cleaned, symlinks resolved
}

// NewWorkspace returns a workspace rooted at dir, which must exist and be a
// directory.
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
	return &Workspace{root: real}, nil
}

// Root returns the workspace's absolute root, symlinks resolved.
func (w *Workspace) Root() string { return w.root }

// Resolve returns the absolute path, symlinks resolved, that path names
// inside the workspace. A relative path is taken from the root. The path
// need not exist (a file about to be written): its longest existing prefix
// is resolved and the rest appended. Any escape yields a *PathError wrapping
// ErrOutsideWorkspace.
func (w *Workspace) Resolve(path string) (string, error) {
	if path == "" {
		return "", &PathError{Path: path, Err: errors.New("path is empty")}
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", &PathError{Path: path, Err: errors.New("path contains a NUL byte")}
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.root, p)
	}
	p = filepath.Clean(p)
	if !w.contains(p) {
		return "", &PathError{Path: path, Err: ErrOutsideWorkspace}
	}
	real, err := resolveExisting(p)
	if err != nil {
		return "", &PathError{Path: path, Err: err}
	}
	if !w.contains(real) {
		return "", &PathError{Path: path, Err: fmt.Errorf("%w (a symlink leads to %s)", ErrOutsideWorkspace, real)}
	}
	return real, nil
}

// Rel returns abs relative to the root, for display; "." for the root itself.
func (w *Workspace) Rel(abs string) string {
	rel, err := filepath.Rel(w.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(rel)
}

// contains reports whether the clean absolute path p is the root or below it.
func (w *Workspace) contains(p string) bool {
	rel, err := filepath.Rel(w.root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolveExisting resolves the symlinks of the longest existing prefix of the
// clean absolute path p and appends the remaining, not yet existing, part.
func resolveExisting(p string) (string, error) {
	var rest []string
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		// A dangling symlink exists as a link but not as a target: refuse to
		// guess where it points.
		if _, lerr := os.Lstat(cur); lerr == nil {
			return "", fmt.Errorf("%s is a dangling symlink", cur)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}
