package toolsys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular is matched (errors.Is) by a *FileKindError: the path names
// something other than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrHardlinked is matched (errors.Is) by a *HardlinkError: the file has
// more than one hard link and the policy refuses that.
var ErrHardlinked = errors.New("file has more than one hard link")

// ErrFileChanged says the file at a name was replaced between the check
// before opening it and the check of the open file.
var ErrFileChanged = errors.New("file changed while it was being opened")

// FileKindError says which path names something other than a regular file,
// and what it is.
type FileKindError struct {
	// Path is the workspace name, with forward slashes.
	Path string
	// Mode is the file's mode; its type bits say what it is.
	Mode fs.FileMode
}

// Error implements error: "fifo is a named pipe, not a regular file".
func (e *FileKindError) Error() string {
	return fmt.Sprintf("%s is a %s, not a regular file", e.Path, e.Kind())
}

// Kind names what the file is: "directory", "symbolic link", "named pipe",
// "socket", "device" or "special file".
func (e *FileKindError) Kind() string { return kindName(e.Mode) }

// Is reports whether target is ErrNotRegular.
func (e *FileKindError) Is(target error) bool { return target == ErrNotRegular }

// HardlinkError says which regular file has more than one hard link.
type HardlinkError struct {
	// Path is the workspace name, with forward slashes.
	Path string
	// Links is the file's link count.
	Links uint64
}

// Error implements error.
func (e *HardlinkError) Error() string {
	return fmt.Sprintf("%s has %d hard links: another name for the same file may lie outside the workspace", e.Path, e.Links)
}

// Is reports whether target is ErrHardlinked.
func (e *HardlinkError) Is(target error) bool { return target == ErrHardlinked }

// kindName names the type of a file mode for an error message.
func kindName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// FilePolicy says which files the workspace's file operations accept. The
// zero value is the strict default: regular files with one link only.
type FilePolicy struct {
	// AllowHardlinks accepts a regular file whose link count is above 1.
	// False (the default) refuses it: a hard link made inside the
	// workspace to a file outside it (by a shell command, say) is that
	// outside file, and no path check can tell. Where link counts are not
	// available (not Unix), every file counts as having one link.
	AllowHardlinks bool
}

// Check returns nil when fi, the file at the workspace name name, is a
// regular file the policy accepts, and otherwise a *FileKindError or a
// *HardlinkError.
func (p FilePolicy) Check(name string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &FileKindError{Path: slash(name), Mode: fi.Mode()}
	}
	if n := linkCount(fi); n > 1 && !p.AllowHardlinks {
		return &HardlinkError{Path: slash(name), Links: n}
	}
	return nil
}

// OpenRegular opens the file at the workspace name name (see Name) for
// reading, through the root, if it is a regular file the policy accepts. It
// never blocks on a named pipe and never reads a device: the file is first
// stat'ed through the root and refused unless regular, then opened with
// O_NONBLOCK and O_NOCTTY (where the platform has them), and the open file
// itself is checked again; that second check, on the descriptor that will be
// read, decides. The file must also be the one the first check saw
// (ErrFileChanged otherwise). It returns the open file and its FileInfo;
// the caller closes the file.
func (w *Workspace) OpenRegular(name string, p FilePolicy) (*os.File, fs.FileInfo, error) {
	before, err := w.fsys.Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if err := p.Check(name, before); err != nil {
		return nil, nil, err
	}
	f, err := w.fsys.OpenFile(name, readFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	after, err := f.Stat()
	if err == nil {
		err = p.Check(name, after)
	}
	if err == nil && !os.SameFile(before, after) {
		err = &fs.PathError{Op: "open", Path: slash(name), Err: ErrFileChanged}
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, after, nil
}
