package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agcore/agcore/toolsys"
)

// newFileMode is the mode of a file write_file creates.
const newFileMode fs.FileMode = 0o644

// tempTries is how many temporary names writeAtomic tries before giving up.
const tempTries = 16

// writeAtomic replaces the file at the workspace name name with data, all
// through the workspace root: it opens the parent directory as a root of its
// own, creates a temporary file there (O_EXCL, never through a symlink),
// writes and syncs it, gives it mode and renames it over the name inside that
// same directory, so a reader sees either the old content or the new, never
// a mix, and no step can be redirected outside the workspace. Renaming
// replaces the directory entry: a file that was another name of the same
// inode keeps its content. The parent directory must exist.
func writeAtomic(ws *toolsys.Workspace, name string, data []byte, mode fs.FileMode) (err error) {
	dirName, base := filepath.Split(name)
	if dirName == "" {
		dirName = "."
	}
	dir, err := ws.FS().OpenRoot(dirName)
	if err != nil {
		return err
	}
	defer dir.Close()
	tmpName, tmp, err := createTemp(dir, base)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = dir.Remove(tmpName)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = dir.Rename(tmpName, base); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// createTemp creates a new file ".base.tmp-XXXX" in dir, exclusively.
func createTemp(dir *os.Root, base string) (string, *os.File, error) {
	for range tempTries {
		name := "." + base + ".tmp-" + strconv.FormatUint(rand.Uint64(), 36)
		f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, fmt.Errorf("no free temporary name for %s after %d tries", base, tempTries)
}

// syncDir makes a rename in dir durable where the platform allows it; a
// failure only weakens durability, so it is ignored.
func syncDir(dir *os.Root) {
	d, err := dir.Open(".")
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// existingMode returns the permission bits of the file at the workspace name
// name and whether it exists, looking through the root without following a
// final symlink. A directory is errIsDir; a file the policy refuses (not
// regular, several hard links) is its *toolsys.FileKindError or
// *toolsys.HardlinkError.
func existingMode(ws *toolsys.Workspace, name string, policy toolsys.FilePolicy) (fs.FileMode, bool, error) {
	st, err := ws.FS().Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return newFileMode, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if st.IsDir() {
		return 0, true, errIsDir
	}
	if err := policy.Check(name, st); err != nil {
		return 0, true, err
	}
	return st.Mode().Perm(), true, nil
}

// errIsDir says a file tool was pointed at a directory.
var errIsDir = errors.New("is a directory")
