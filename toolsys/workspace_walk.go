package toolsys

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// WalkDir walks the tree at the workspace name dir (see Name) through the
// root, as fs.WalkDir does: fn sees every entry, lexically ordered, with a
// slash-separated workspace name, and may return fs.SkipDir or fs.SkipAll.
// Symlinks are reported, never followed. A directory is opened with
// O_DIRECTORY and O_NONBLOCK (where the platform has them), so an entry
// swapped for a named pipe after it was listed fails at once instead of
// blocking. Entries are read with lstat through the open directory, so each
// DirEntry's Info is the entry's own.
func (w *Workspace) WalkDir(dir string, fn fs.WalkDirFunc) error {
	return fs.WalkDir(walkFS{w.fsys}, slash(dir), fn)
}

// walkFS is the view of a root that WalkDir walks: Stat and ReadDir through
// the root, opening directories only.
type walkFS struct{ r *os.Root }

// Open opens the directory name; it refuses anything else without blocking.
func (f walkFS) Open(name string) (fs.File, error) {
	return f.r.OpenFile(name, dirFlags, 0)
}

// Stat returns the FileInfo of name, following symlinks inside the root.
func (f walkFS) Stat(name string) (fs.FileInfo, error) { return f.r.Stat(name) }

// ReadDir lists the directory name, sorted by file name.
func (f walkFS) ReadDir(name string) ([]fs.DirEntry, error) {
	d, err := f.r.OpenFile(name, dirFlags, 0)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// slash writes a workspace name with forward slashes.
func slash(name string) string { return filepath.ToSlash(name) }
