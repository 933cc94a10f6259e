package builtin

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agcore/agcore/toolsys"
)

// errNoWorkspace is the model-facing refusal of a file tool called without a
// workspace.
var errNoWorkspace = errors.New("no workspace configured")

// sniffLen is how much of a file binary detection looks at.
const sniffLen = 8 << 10

// resolve maps a path the model gave to its name in the call's workspace
// (see toolsys.Workspace.Name): every later access uses that name through
// the workspace root. The error, when not nil, names the path and is meant
// for the model.
func resolve(tc *toolsys.Context, path string) (*toolsys.Workspace, string, error) {
	if tc == nil || tc.Workspace == nil {
		return nil, "", errNoWorkspace
	}
	name, err := tc.Workspace.Name(path)
	if err != nil {
		return nil, "", err
	}
	return tc.Workspace, name, nil
}

// display writes a workspace name as the model sees it: relative to the
// root, with forward slashes; "." for the root.
func display(name string) string { return filepath.ToSlash(name) }

// below returns the slash-separated workspace name name relative to base,
// a directory at or above it.
func below(base, name string) string {
	if base == "." {
		return name
	}
	return strings.TrimPrefix(strings.TrimPrefix(name, base), "/")
}

// fileError turns a file-system error about the workspace file rel into a
// result for the model, naming rel rather than an absolute path.
func fileError(rel string, err error) toolsys.Result {
	var kind *toolsys.FileKindError
	var links *toolsys.HardlinkError
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return toolsys.ErrorResult("file not found: %s", rel)
	case errors.As(err, &kind):
		return toolsys.ErrorResult("%s is a %s, not a regular file; file tools read and write regular files only", rel, kind.Kind())
	case errors.As(err, &links):
		return toolsys.ErrorResult("%s has %d hard links: another name for the same file may lie outside the workspace, "+
			"so file tools refuse it (the AllowHardlinks option allows it)", rel, links.Links)
	case errors.Is(err, toolsys.ErrFileChanged):
		return toolsys.ErrorResult("%s was replaced while it was being opened; try again", rel)
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return toolsys.ErrorResult("cannot access %s: %v", rel, err)
}

// isDir reports whether err says the path is a directory.
func isDir(err error) bool {
	var kind *toolsys.FileKindError
	return errors.Is(err, errIsDir) || errors.As(err, &kind) && kind.Mode.IsDir()
}

// isBinary reports whether data, the start of a file, holds a NUL byte in
// its first sniffLen bytes.
func isBinary(data []byte) bool {
	if len(data) > sniffLen {
		data = data[:sniffLen]
	}
	return bytes.IndexByte(data, 0) >= 0
}

// eachLine calls fn for every line of r, numbered from 1, without its line
// ending ("\n" or "\r\n"). A line longer than maxLine bytes is cut on a
// UTF-8 boundary and fn learns it through cut; the rest of that line is
// skipped. fn returns false to stop early. A line is valid only during the
// call.
func eachLine(r io.Reader, maxLine int, fn func(n int, line []byte, cut bool) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	buf := make([]byte, 0, 4096)
	for n := 1; ; n++ {
		buf = buf[:0]
		cut := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if err == nil {
				chunk = chunk[:len(chunk)-1]
			}
			if room := maxLine - len(buf); len(chunk) > room {
				buf = append(buf, chunk[:room]...)
				cut = true
			} else {
				buf = append(buf, chunk...)
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if err != nil && len(buf) == 0 && !cut {
			return nil // the input ended with a line ending (or was empty)
		}
		line := bytes.TrimSuffix(buf, []byte("\r"))
		if cut {
			line = cutUTF8(line, len(line))
		}
		if !fn(n, line, cut) || err != nil {
			return nil
		}
	}
}

// cutUTF8 returns the longest prefix of b of at most n bytes that does not
// end inside a UTF-8 sequence.
func cutUTF8(b []byte, n int) []byte {
	if n >= len(b) {
		n = len(b)
	} else {
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
	}
	b = b[:n]
	// Drop an incomplete sequence at the very end.
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return b
}
