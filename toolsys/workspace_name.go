package toolsys

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// maxSymlinks is how many symlinks Name follows for one path, as Linux's
// limit for one lookup.
const maxSymlinks = 40

// errSymlinkLoop says Name followed more than maxSymlinks symlinks.
var errSymlinkLoop = fmt.Errorf("more than %d symlinks followed (a symlink loop?)", maxSymlinks)

// Name maps path, as a tool's caller gave it, to the name inside the
// workspace that it denotes: clean, relative to the root ("." for the root),
// with every symlink resolved, for use with FS. A relative path is taken
// from the root; an absolute one must lie under the root.
//
// Symlinks are read through the root, one component at a time. A symlink
// whose target stays inside the workspace is followed, an absolute one too
// when its target lies under the root; one that leads outside is refused
// with a *PathError wrapping ErrOutsideWorkspace that names the link and its
// target. The path need not exist (a file about to be written): the part
// that does not exist is appended as given. A dangling symlink is refused
// rather than created through.
//
// The name is where path led when Name looked; the file system may change
// before it is used. Using it through FS keeps that use inside the
// workspace whatever changed.
func (w *Workspace) Name(path string) (string, error) {
	p, err := w.lexical(path)
	if err != nil {
		return "", err
	}
	name, err := w.follow(p)
	if err != nil {
		return "", &PathError{Path: path, Err: err}
	}
	return name, nil
}

// component is one step of a path being resolved, with the symlink whose
// target it came from, as "link -> target" ("" when it came from the
// caller's path).
type component struct {
	name string
	link string
}

// follow resolves the symlinks of the clean relative path p through the
// root, as described at Name.
func (w *Workspace) follow(p string) (string, error) {
	todo := components(p, "")
	var done []string
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c.name {
		case ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", fmt.Errorf("%w: symlink %s leaves the root", ErrOutsideWorkspace, c.link)
			}
			done = done[:len(done)-1]
			continue
		}
		cur := filepath.Join(append(done, c.name)...)
		fi, err := w.fsys.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			if c.link != "" {
				return "", fmt.Errorf("symlink %s is dangling (%s does not exist)", c.link, filepath.ToSlash(cur))
			}
			rest := []string{cur}
			for _, r := range todo {
				rest = append(rest, r.name)
			}
			return filepath.Join(rest...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c.name)
			continue
		}
		if links++; links > maxSymlinks {
			return "", errSymlinkLoop
		}
		target, err := w.fsys.Readlink(cur)
		if err != nil {
			return "", err
		}
		link := filepath.ToSlash(cur) + " -> " + target
		if filepath.IsAbs(target) {
			rel, ok := w.local(filepath.Clean(target))
			if !ok {
				return "", fmt.Errorf("%w: symlink %s leaves the root", ErrOutsideWorkspace, link)
			}
			done, target = nil, rel
		}
		todo = append(components(target, link), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return filepath.Join(done...), nil
}

// components splits the relative path p into its components, each marked as
// coming from link.
func components(p, link string) []component {
	var cs []component
	for part := range strings.SplitSeq(filepath.ToSlash(p), "/") {
		if part != "" {
			cs = append(cs, component{name: part, link: link})
		}
	}
	return cs
}
